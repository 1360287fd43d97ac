"""Shared test fixtures: the repository root, verl's config tree, a config cache."""

from __future__ import annotations

import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from verl_preflight.hydra_stage.tree import ConfigCache, locate  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures")
SHARED = os.path.join(os.path.dirname(ROOT), "shared")


def run_cli(capsys, *args):
    """The command line in this process: (exit code, standard output, standard error)."""
    from verl_preflight.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# The command line as a program for `python -c PROGRAM ARG...` that, after the run, says on
# the last line of standard error what it opened, which of Hydra's modules it imported and which
# of the tool's: `SPIED {"opened": [...], "loaded": [...], "ours": [...]}` (spied_run reads it).
# It starts as the command does (verl_preflight.start). Its exit status is the run's.
SPIED_CLI = (
    "import sys, builtins, json\n"
    f"sys.path.insert(0, {os.path.join(ROOT, 'src')!r})\n"
    "opened = []\n"
    "real_open = builtins.open\n"
    "def spy(file, *a, **k):\n"
    "    opened.append(str(file))\n"
    "    return real_open(file, *a, **k)\n"
    "builtins.open = spy\n"
    "from verl_preflight.start import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    builtins.open = real_open\n"
    "    loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('hydra', 'omegaconf', 'antlr4'))\n"
    "    ours = sorted(m for m in sys.modules if m.split('.')[0] == 'verl_preflight')\n"
    "    print('SPIED ' + json.dumps({'opened': opened, 'loaded': loaded, 'ours': ours}), file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def spied_run(argv, **kwargs):
    """(completed process with the SPIED line taken off its stderr, what it opened, the Hydra
    modules it loaded): the command line run as SPIED_CLI; `.ours` of the process: the tool's
    modules it loaded."""
    import json
    import subprocess

    proc = subprocess.run([sys.executable, "-c", SPIED_CLI, *argv], capture_output=True, text=True, **kwargs)
    lines = proc.stderr.splitlines()
    spied = json.loads(lines[-1][len("SPIED ") :])
    proc.stderr = "".join(line + "\n" for line in lines[:-1])
    proc.ours = spied["ours"]
    return proc, spied["opened"], spied["loaded"]


# a launch every key of which the installed verl has, for the trees the kept-report tests check
MEMO_LAUNCH = (
    "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "
    '"${A[@]}" "$@"\n'
)
REPORT_TIME = re.compile(r"\(\d+\.\d\ds\)\n\Z")  # the end of the text report: the run's time


@pytest.fixture
def memo_tree(tmp_path):
    """Two scripts, one of which sources a file: what the kept-report tests check and change."""
    (tmp_path / "lib.sh").write_text("A=(trainer.total_epochs=2)\n")
    (tmp_path / "uses_lib.sh").write_text("#!/usr/bin/env bash\nsource ./lib.sh\n" + MEMO_LAUNCH)
    (tmp_path / "alone.sh").write_text("#!/usr/bin/env bash\nA=(trainer.total_epochs=3)\n" + MEMO_LAUNCH)
    return tmp_path


def write_file(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture(scope="session")
def config_source():
    return locate(None)


@pytest.fixture(scope="session")
def config_cache(config_source):
    return ConfigCache(config_source, use_disk=False)


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory, monkeypatch):
    """Tests never touch the user's cache. The workers of one session share one (what a check
    derives from a release's sources and composes is kept once, as on a user's machine); a
    test of the cache itself sets its own."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the session's folder
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared / "xdg-cache"))
    from verl_preflight import cache_files

    cache_files.use_disk(True)  # an earlier in-process `--no-cache` run left it off
