"""Every rule has a failing and a passing fixture (tests/fixtures/rules/<rule>/).

`bad.sh` marks each line where the rule must fire with `# expect: RULE`
(`# expect-line-1: RULE` for file-level findings); the rule must fire there and
nowhere else. `good.sh` must have no finding of that rule and no error.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from conftest import FIXTURES

from verl_preflight.cli import main
from verl_preflight.rules import RULES

RULE_DIR = os.path.join(FIXTURES, "rules")
EXTRA_ARGS = {"file-too-large": ["--max-bytes", "200"], "profiles-capped": ["--max-profiles", "4"]}


def expected_lines(path: str, rule: str) -> set[int]:
    lines = set()
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if re.search(rf"#\s*expect:\s*{re.escape(rule)}\b", line):
                lines.add(number)
            if re.search(rf"#\s*expect-line-1:\s*{re.escape(rule)}\b", line):
                lines.add(1)
    return lines


def findings_for(path: str, rule: str, capsys) -> list[dict]:
    main(["--format", "json", *EXTRA_ARGS.get(rule, []), path])
    out, _ = capsys.readouterr()
    return json.loads(out)["findings"]


def test_every_rule_has_fixtures():
    missing = [r.id for r in RULES
               if not all(os.path.isfile(os.path.join(RULE_DIR, r.id, f)) for f in ("bad.sh", "good.sh"))]
    assert not missing


@pytest.mark.parametrize("rule", [r.id for r in RULES])
def test_bad_fixture_fires_on_marked_lines(rule, capsys):
    path = os.path.join(RULE_DIR, rule, "bad.sh")
    expected = expected_lines(path, rule)
    assert expected, "the fixture marks no line"
    found = {f["line"] for f in findings_for(path, rule, capsys) if f["rule"] == rule}
    assert found == expected


@pytest.mark.parametrize("rule", [r.id for r in RULES])
def test_good_fixture_is_clean(rule, capsys):
    path = os.path.join(RULE_DIR, rule, "good.sh")
    findings = findings_for(path, rule, capsys)
    assert not [f for f in findings if f["rule"] == rule or f["severity"] == "error"]
