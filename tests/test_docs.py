"""docs/rules.md is generated from the rule registry; the README shows the commands that work."""

from __future__ import annotations

import os

from conftest import ROOT

from verl_preflight.report.rule_docs import markdown
from verl_preflight.rules import all_rules


def test_rules_doc_is_current():
    with open(os.path.join(ROOT, "docs", "rules.md"), encoding="utf-8") as fh:
        assert fh.read() == markdown(), "regenerate: make docs"


def test_every_rule_has_examples():
    for rule in all_rules():
        assert rule.bad.strip() and rule.good.strip() and rule.bad != rule.good, rule.id
        assert rule.severity in ("error", "warning", "info")


def test_readme_gives_the_two_commands():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    assert "make validate" in text and "make test" in text


def test_stack_help_names_every_package_the_option_takes():
    """--stack's help lists the packages it accepts (the parser is built without importing target)."""
    from verl_preflight.app import cli
    from verl_preflight.target.launch_target import PACKAGES

    stack = next(a for a in cli._parser()._actions if "--stack" in a.option_strings)
    listed = stack.help.split("PKG: ", 1)[1].rstrip(")").split(", ")
    assert listed == list(PACKAGES)
