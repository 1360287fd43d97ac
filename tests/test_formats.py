"""--format sarif (validated against the SARIF 2.1.0 schema) and --format github."""

from __future__ import annotations

import json
import os

import pytest
from conftest import ROOT, SHARED

from verl_preflight.app.cli import main

# The SARIF 2.1.0 schema: $SARIF_SCHEMA_FILE, else npm's @microsoft/jest-sarif (make setup unpacks it), else ../shared
SARIF_SCHEMAS = [
    os.environ.get("SARIF_SCHEMA_FILE", ""),
    os.path.join(ROOT, ".venv", "sarif-schema", "package", "lib", "schemas", "sarif-2.1.0-rtm.5.json"),
    os.path.join(SHARED, "data", "sarif-schema-2.1.0.json"),
]


def sarif_schema() -> str:
    for path in SARIF_SCHEMAS:
        if os.path.isfile(path):
            return path
    pytest.skip("no SARIF 2.1.0 schema: `make setup` with npm unpacks @microsoft/jest-sarif's")


BAD = """\
#!/usr/bin/env bash
MODE=${MODE:-a}
case "$MODE" in a) N=1 ;; b) N=2 ;; esac
ACTOR=(
    actor_rollout_ref.actor.megatron.use_mbridge=False
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
)
python3 -m verl.trainer.main_ppo model_engine=megatron "${ACTOR[@]}" trainer.nnodes=$N trainer.total_epoch=1 "$@"
"""


@pytest.fixture()
def bad(tmp_path):
    p = tmp_path / "bad, odd: name.sh"
    p.write_text(BAD)
    return str(p)


def test_sarif_is_valid_and_complete(bad, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    code = main(["--format", "sarif", bad])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    with open(sarif_schema(), encoding="utf-8") as fh:
        jsonschema.validate(doc, json.load(fh))
    run = doc["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert {"use-mbridge", "override-missing-key"} <= set(rules)
    assert rules["use-mbridge"]["help"]["markdown"].count("```bash") == 2
    by_rule = {r["ruleId"]: r for r in run["results"]}
    mb = by_rule["use-mbridge"]
    assert mb["level"] == "error"
    assert mb["locations"][0]["physicalLocation"]["region"] == {"startLine": 5, "startColumn": 5}
    assert mb["properties"]["profiles"] == [{"MODE": "a"}, {"MODE": "b"}]
    assert run["tool"]["driver"]["rules"][mb["ruleIndex"]]["id"] == "use-mbridge"
    # what the run checked against, per script: verl, where it came from, device, stack
    [(path, targets)] = run["properties"]["targets"].items()
    assert path.endswith("name.sh") and len(targets) == 1, targets
    assert targets[0]["target"].startswith("verl 0.9.1 (installed)") and "megatron-core" in targets[0]["target"]


def test_github_annotations(bad, capsys):
    code = main(["--format", "github", bad])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    mb = [ln for ln in lines if "title=use-mbridge" in ln]
    assert mb and mb[0].startswith("::error file=")
    # the title names what it was checked against (a comma in a property is escaped)
    assert ",line=5,col=5,title=use-mbridge (verl 0.9.1%2C device not known)::" in mb[0], mb[0]
    assert "bad%2C odd%3A name.sh" in mb[0]  # property values are escaped
    assert mb[0].endswith("(all profiles)")  # labelled as the text report labels it
