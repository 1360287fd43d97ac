"""Every rule has a failing and a passing fixture (tests/fixtures/rules/<rule>/).

`bad.sh` marks each line where the rule must fire with `# expect: RULE`
(`# expect-line-1: RULE` for file-level findings); the rule must fire there and
nowhere else. `good.sh` must have no finding of that rule, no error and no warning (it passes `--strict`).
"""

from __future__ import annotations

import json
import os
import re

import pytest
from conftest import FIXTURES

from verl_preflight.app.cli import main
from verl_preflight.rules import all_rules

RULES = [r for r in all_rules() if r.no_fixture is None]

RULE_DIR = os.path.join(FIXTURES, "rules")
EXTRA_ARGS = {"file-too-large": ["--max-bytes", "300"], "profiles-capped": ["--max-profiles", "4"]}
EXTRA_ARGS |= {r.id: ["--enable", r.id] for r in all_rules() if r.opt_in}  # reported only where turned on


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
    missing = [
        r.id for r in RULES if not all(os.path.isfile(os.path.join(RULE_DIR, r.id, f)) for f in ("bad.sh", "good.sh"))
    ]
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
    """The passing fixture passes `--strict`: no finding of its rule, no error, no warning."""
    path = os.path.join(RULE_DIR, rule, "good.sh")
    code = main(["--strict", "--format", "json", *EXTRA_ARGS.get(rule, []), path])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert not [f for f in findings if f["rule"] == rule or f["severity"] in ("error", "warning")]
    assert code == 0


REGRESSIONS = os.path.join(FIXTURES, "regressions")


def _regressions():
    if not os.path.isdir(REGRESSIONS):
        return []
    return sorted(os.path.join(REGRESSIONS, n) for n in os.listdir(REGRESSIONS) if n.endswith(".sh"))


def test_seed_regressions_exist():
    names = {os.path.basename(p) for p in _regressions()}
    assert {"gdn_flags_ungated.sh", "use_mbridge_false.sh"} <= names


@pytest.mark.parametrize("path", _regressions(), ids=os.path.basename)
def test_seed_regression_is_caught_at_the_right_line(path, capsys):
    """The two mistakes the seed PRs fixed (#7335 GDN gate, #6429 use_mbridge) are caught where they are."""
    with open(path, encoding="utf-8") as fh:
        marks = {
            (m.group(1), n)
            for n, line in enumerate(fh, start=1)
            for m in re.finditer(r"#\s*expect:\s*([a-z0-9-]+)", line)
        }
    assert marks
    main(["--format", "json", path])
    findings = json.loads(capsys.readouterr().out)["findings"]
    # every mark found (the GDN flags on Ascend without MindSpeed-Bridge do nothing: a warning), no other error
    found = {(f["rule"], f["line"]) for f in findings if f["severity"] == "error" or (f["rule"], f["line"]) in marks}
    assert found == marks
