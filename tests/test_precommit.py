"""Real pre-commit runs the hook from this repository on a failing and a passing script.

`pre-commit try-repo` builds the hook's isolated environment from the package
index (allowed for tests that build an environment). That environment has no
verl and the hook names none: a script is checked against the verl its project
carries, else the newest release the tool knows, from the wheel `make`
downloaded into .venv/wheels (VERL_PREFLIGHT_WHEELS), so nothing else is fetched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow  # the slow tier (make test-slow): pre-commit builds its hook environment

PRE_COMMIT = os.path.join(os.path.dirname(sys.executable), "pre-commit")
WHEELS = os.path.join(ROOT, ".venv", "wheels")

GOOD = """\
#!/usr/bin/env bash
set -euo pipefail
python3 -m verl.trainer.main_ppo data.train_batch_size=64 actor_rollout_ref.actor.ppo_mini_batch_size=16 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 critic.ppo_micro_batch_size_per_gpu=2 trainer.total_epochs=1 "$@"
"""
BAD = GOOD.replace("trainer.total_epochs=1", "trainer.total_epoch=1")
# the hook's environment has no megatron-core: the shipped key data still catches the typo
BAD_KEY = GOOD.replace(
    "trainer.total_epochs=1",
    "model_engine=megatron +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularty=full",
)


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory):
    if not os.path.isdir(WHEELS):
        pytest.skip("make has not downloaded the verl wheel (.venv/wheels)")
    repo = tmp_path_factory.mktemp("user-repo")
    for name, text in (("good.sh", GOOD), ("bad.sh", BAD), ("bad_key.sh", BAD_KEY)):
        (repo / name).write_text(text)
    git = shutil.which("git")
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"
    )
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "scripts"]):
        subprocess.run([git, *cmd], cwd=repo, check=True, env=env, capture_output=True)
    return repo


def try_repo(repo, filenames, tmp_cache):
    env = dict(os.environ, VERL_PREFLIGHT_WHEELS=WHEELS, PRE_COMMIT_HOME=str(tmp_cache))
    names = [filenames] if isinstance(filenames, str) else list(filenames)
    return subprocess.run(
        [PRE_COMMIT, "try-repo", ROOT, "validate-scripts", "--files", *names],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def test_hook_fails_on_a_bad_script_and_passes_a_good_one(user_repo, tmp_path_factory):
    cache = tmp_path_factory.mktemp("pre-commit-home")
    bad = try_repo(user_repo, ["bad.sh", "bad_key.sh"], cache)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "bad.sh:4:" in bad.stdout and "trainer.total_epoch" in bad.stdout
    assert "override-missing-key" in bad.stdout
    assert "bad_key.sh:4:" in bad.stdout and "recompute_granularty" in bad.stdout
    assert "transformer-config-key" in bad.stdout
    good = try_repo(user_repo, "good.sh", cache)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout


def test_hook_manifest():
    import yaml

    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as fh:
        hook, system = yaml.safe_load(fh)
    assert hook["id"] == "validate-scripts" and hook["language"] == "python"
    assert hook["files"] == r"\.sh$" and hook["entry"] == "validate-scripts"
    assert hook["args"] == ["--dependents"] and hook["verbose"] is True  # no verl pinned; warnings shown
    assert system["id"] == "validate-scripts-system" and system["language"] == "system"
    assert {k: v for k, v in system.items() if k not in ("id", "name", "description", "language")} == {
        k: v for k, v in hook.items() if k not in ("id", "name", "description", "language")
    }


def test_the_system_hook_runs_the_tool_of_the_environment_it_is_started_from(user_repo, tmp_path_factory):
    """`validate-scripts-system`: pre-commit runs the validate-scripts on PATH (here this checkout's
    .venv), so the installed verl it meets is that environment's."""
    env = dict(
        os.environ,
        VERL_PREFLIGHT_WHEELS=WHEELS,
        PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
        PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    )
    run = subprocess.run(
        [PRE_COMMIT, "try-repo", ROOT, "validate-scripts-system", "--files", "bad.sh"],
        cwd=user_repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 1 and "bad.sh:4:" in run.stdout and "override-missing-key" in run.stdout, run.stdout
    assert "(installed)" in run.stdout  # the environment's own verl, not a release fetched for the hook


def _commit(repo, *cmds):
    git = shutil.which("git")
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"
    )
    for cmd in cmds:
        subprocess.run([git, *cmd], cwd=repo, check=True, env=env, capture_output=True)


def test_hook_checks_against_the_verl_the_project_vendors(tmp_path_factory):
    """A project that vendors verl: the hook checks its scripts against that verl (a key it lacks
    is an error), not against a release it pins itself."""
    if not os.path.isdir(WHEELS):
        pytest.skip("make has not downloaded the verl wheel (.venv/wheels)")
    from verl_preflight.core.config_location import installed_root

    repo = tmp_path_factory.mktemp("vendoring-repo")
    config = repo / "verl" / "trainer" / "config"
    shutil.copytree(os.path.join(installed_root(), "trainer", "config"), config)
    text = (config / "ppo_trainer.yaml").read_text()
    (config / "ppo_trainer.yaml").write_text(text.replace("  total_epochs:", "  total_epoch_count:", 1))
    (repo / "verl" / "__init__.py").write_text("")  # a package: what `import verl` there loads
    (repo / "good.sh").write_text(GOOD)
    _commit(repo, ["init", "-q"], ["add", "."], ["commit", "-qm", "vendored verl"])
    run = try_repo(repo, "good.sh", tmp_path_factory.mktemp("pre-commit-home"))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "good.sh:4:" in run.stdout and "trainer.total_epochs" in run.stdout and "vendored, verl" in run.stdout


def test_an_edit_to_a_sourced_helper_rechecks_the_scripts_that_read_it(tmp_path_factory):
    if not os.path.isdir(WHEELS):
        pytest.skip("make has not downloaded the verl wheel (.venv/wheels)")
    repo = tmp_path_factory.mktemp("helper-repo")
    (repo / "common.sh").write_text("EPOCHS=(trainer.total_epochs=1)\n")
    sourcing = GOOD.replace("set -euo pipefail\n", 'set -euo pipefail\nsource "$(dirname "$0")/common.sh"\n')
    (repo / "run.sh").write_text(sourcing.replace("trainer.total_epochs=1", '"${EPOCHS[@]}"'))
    _commit(repo, ["init", "-q"], ["add", "."], ["commit", "-qm", "scripts"])
    (repo / "common.sh").write_text("EPOCHS=(trainer.total_epoch=1)\n")
    run = try_repo(repo, "common.sh", tmp_path_factory.mktemp("pre-commit-home"))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "common.sh:1:9:" in run.stdout and "override-missing-key" in run.stdout
    assert "run.sh: checked too: it reads common.sh" in run.stdout
