"""Findings the clock cannot change (issue 21, item 1).

Only counted steps decide what is reported: the step budget ends an endless loop at the
same place on any machine, and the wall clock is a backstop whose note has a fixed text.
Here the budget fixtures and scripts that spend most of their step budget are checked while
other processes keep every core busy, with one worker and with four: the JSON output is the
same byte for byte.
"""

from __future__ import annotations

import os
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
