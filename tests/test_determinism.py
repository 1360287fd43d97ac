"""Findings the clock cannot change (issue 21, item 1).

Only counted steps decide what is reported: the step budget ends an endless loop at the
same place on any machine, and the wall clock is a backstop whose note has a fixed text.
Here the budget fixtures and scripts that spend most of their step budget are checked while
other processes keep every core busy, with one worker and with four: the JSON output is the
same byte for byte.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow  # the slow tier (make test-slow): the same tree under load and worker counts

TOOL = os.path.join(ROOT, "tools", "validate_scripts.py")
BURN = "while True:\n    pass\n"


def _heavy(tmp_path) -> list[str]:
    """Scripts that use up, or nearly, the step budget, in several profiles."""
    spin = tmp_path / "spin.sh"
    spin.write_text(
        "#!/usr/bin/env bash\nMODE=${MODE:-a}\ncase \"$MODE\" in a) N=1 ;; b) N=2 ;; c) N=3 ;; esac\n"
        "i=0\nwhile [ $i -lt 60000 ]; do i=$((i + 1)); done\n"
        'python3 -m verl.trainer.main_ppo trainer.nnodes=$N "$@"\n'
    )
    return [
        os.path.join(FIXTURES, "rules", "budget", "bad.sh"),
        os.path.join(FIXTURES, "rules", "budget", "good.sh"),
        str(spin),
    ]


def _run(jobs: str, paths, cache) -> str:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    proc = subprocess.run(
        [sys.executable, TOOL, "--no-cache", "-j", jobs, "--format", "json", *paths],
        capture_output=True,
        text=True,
        env=env,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_a_busy_machine_and_the_worker_count_change_no_byte(tmp_path):
    paths = _heavy(tmp_path)
    quiet = _run("1", paths, tmp_path / "c0")
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(os.cpu_count() or 2)]
    try:
        busy = [_run(jobs, paths, tmp_path / f"c{jobs}") for jobs in ("1", "4")]
    finally:
        for p in burners:
            p.kill()
            p.wait()
    assert busy == [quiet, quiet]
    assert '"rule": "budget"' in quiet  # the endless loop is stopped by the step budget
    assert "ran past" not in quiet  # the clock, a backstop, never spoke


def _project_with_its_own_verl(tmp_path):
    """A project that vendors a verl whose root config lacks a key the given tree has."""
    import shutil

    from verl_preflight.core.config_location import installed_root
    from verl_preflight.app.runner import SERIAL_BELOW

    project = tmp_path / "proj"
    vendored = project / "verl" / "trainer" / "config"
    shutil.copytree(os.path.join(installed_root(), "trainer", "config"), vendored)
    text = (vendored / "ppo_trainer.yaml").read_text()
    (vendored / "ppo_trainer.yaml").write_text(text.replace("  total_epochs:", "  total_epoch_count:", 1))
    (project / "verl" / "__init__.py").write_text("")  # a package: what `import verl` there loads
    (project / ".git").mkdir()
    for i in range(max(SERIAL_BELOW, 2)):
        (project / f"run_{i}.sh").write_text(
            "#!/usr/bin/env bash\nDEVICE=${DEVICE:-gpu}\n"
            'case "$DEVICE" in npu) N=8 ;; *) N=4 ;; esac\n'
            "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo trainer.n_gpus_per_node=$N "
            f"trainer.total_epochs={i + 1} actor_rollout_ref.rollout.tensor_model_parallel_size=3\n"
        )
    return str(project), os.path.join(installed_root(), "trainer", "config")


def _output(args, cache) -> tuple[int, str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    proc = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, env=env)
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 1), proc.stderr
    return proc.returncode, re.sub(r"\(\d+\.\d\ds\)\n\Z", "(TIME)\n", proc.stdout)  # the text summary's time


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_every_worker_count_gives_the_same_report_byte_for_byte(tmp_path, fmt):
    """Issue 44, item 1: a vendored verl and --verl-config differ; -j 1 and -j 2, each cold then
    warm, print the same bytes, and a cache those runs filled answers a run without the flag
    (the project's own verl) as --no-cache does: the cache key holds what decides the target."""
    project, given = _project_with_its_own_verl(tmp_path)
    flagged = ["--format", fmt, "--verl-config", given, project]
    outs = {_output(["-j", jobs, *flagged], tmp_path / f"c{jobs}") for jobs in ("1", "2") for _ in range(2)}
    assert len(outs) == 1, "\n----\n".join(o for _, o in outs)
    code, _ = next(iter(outs))
    own = {_output(["-j", jobs, "--format", fmt, project], tmp_path / f"c{jobs}") for jobs in ("1", "2")}
    fresh = _output(["--no-cache", "-j", "1", "--format", fmt, project], tmp_path / "c0")
    assert own == {fresh} and fresh != (code, next(iter(outs))[1])
    assert fresh[0] == 1 and "total_epochs" in fresh[1]


def test_every_worker_count_gives_the_same_report_on_the_corpus(tmp_path):
    """verl v0.7.0's examples as the corpus has them: -j 1 and -j 2 print the same JSON."""
    from conftest import SHARED

    tree = os.path.join(SHARED, "corpus", "verl-v0.7.0")
    if not os.path.isdir(tree):
        pytest.skip("../shared/corpus is absent (a user's clone)")
    outs = {_output(["-j", jobs, "--format", "json", tree], tmp_path / f"c{jobs}") for jobs in ("1", "2")}
    assert len(outs) == 1
