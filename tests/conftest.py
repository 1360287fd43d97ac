"""Shared test fixtures: the repository root, verl's config tree, a config cache."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from verl_preflight.hydra_stage.tree import ConfigCache, locate  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures")
SHARED = os.path.join(os.path.dirname(ROOT), "shared")


def run_cli(capsys, *args):
    """The command line in this process: (exit code, standard output, standard error)."""
    from verl_preflight.app.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# The command line as a program for `python -c PROGRAM ARG...` that, after the run, says on
# the last line of standard error what it opened, which of Hydra's modules it imported, which
# of the tool's, and every module the run imported (`modules`: none before it but sys and
# builtins): `SPIED {"opened": [...], "loaded": [...], "ours": [...], "modules": [...]}`
# (spied_run reads it). It starts as the command does (verl_preflight.app.start). Its exit status
# is the run's.
SPIED_CLI = (
    "import sys, builtins\n"
    "before = set(sys.modules)\n"
    f"sys.path.insert(0, {os.path.join(ROOT, 'src')!r})\n"
    "opened = []\n"
    "real_open = builtins.open\n"
    "def spy(file, *a, **k):\n"
    "    opened.append(str(file))\n"
    "    return real_open(file, *a, **k)\n"
    "builtins.open = spy\n"
    "import os\n"
    "real_os_open = os.open\n"
    "def os_spy(file, *a, **k):\n"
    "    opened.append(str(file))\n"
    "    return real_os_open(file, *a, **k)\n"
    "os.open = os_spy\n"
    "from verl_preflight.app.start import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    builtins.open = real_open\n"
    "    os.open = real_os_open\n"
    "    loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('hydra', 'omegaconf', 'antlr4'))\n"
    "    ours = sorted(m for m in sys.modules if m.split('.')[0] == 'verl_preflight')\n"
    "    modules = sorted(set(sys.modules) - before)\n"
    "    import json\n"
    "    spied = {'opened': opened, 'loaded': loaded, 'ours': ours, 'modules': modules}\n"
    "    print('SPIED ' + json.dumps(spied), file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def spied_run(argv, **kwargs):
    """(completed process with the SPIED line taken off its stderr, what it opened, the Hydra
    modules it loaded): the command line run as SPIED_CLI; `.ours` of the process: the tool's
    modules it loaded; `.modules`: every module the run imported."""
    import json
    import subprocess

    proc = subprocess.run([sys.executable, "-c", SPIED_CLI, *argv], capture_output=True, text=True, **kwargs)
    lines = proc.stderr.splitlines()
    spied = json.loads(lines[-1][len("SPIED ") :])
    proc.stderr = "".join(line + "\n" for line in lines[:-1])
    proc.ours, proc.modules = spied["ours"], spied["modules"]
    return proc, spied["opened"], spied["loaded"]


# a launch every key of which the installed verl has, for the trees the kept-report tests check
MEMO_LAUNCH = (
    "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "
    '"${A[@]}" "$@"\n'
)
REPORT_TIME = re.compile(r"\(\d+\.\d\ds\)\n\Z")  # the end of the text report: the run's time


def session_folder(tmp_path_factory):
    """The folder every worker of this test session shares."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


# a script with a misspelled key (override-missing-key; its advice reads the key history)
MEMO_TYPO = "#!/usr/bin/env bash\nA=(trainer.total_epoch=3)\n" + MEMO_LAUNCH


def _write_memo_tree(folder) -> None:
    (folder / "lib.sh").write_text("A=(trainer.total_epochs=2)\n")
    (folder / "uses_lib.sh").write_text("#!/usr/bin/env bash\nsource ./lib.sh\n" + MEMO_LAUNCH)
    (folder / "alone.sh").write_text("#!/usr/bin/env bash\nA=(trainer.total_epochs=3)\n" + MEMO_LAUNCH)


# what a run keeps for every tree alike: what it derives from the installed verl
DERIVED_FACTS = ("key", "compositions", "derived")


@pytest.fixture(scope="session")
def derived_facts_cache(tmp_path_factory):
    """A cache folder (XDG_CACHE_HOME) that holds only DERIVED_FACTS: the compositions and the
    facts a run derives from the installed verl, none of any tree's results or reports. Built
    once by a real run on a memo tree; the workers of one session share it (under a lock)."""
    import shutil
    import subprocess

    from filelock import FileLock

    shared = session_folder(tmp_path_factory)
    seed = shared / "derived-facts"
    with FileLock(str(shared / "derived-facts.lock")):
        if not (seed / "built").exists():
            shutil.rmtree(seed, ignore_errors=True)
            tree = shared / "derived-facts-tree"
            tree.mkdir(exist_ok=True)
            _write_memo_tree(tree)
            (tree / "typo.sh").write_text(MEMO_TYPO)
            env = dict(os.environ, XDG_CACHE_HOME=str(seed))
            tool = os.path.join(ROOT, "tools", "validate_scripts.py")
            proc = subprocess.run([sys.executable, tool, "."], cwd=tree, env=env, capture_output=True, text=True)
            assert proc.returncode == 1, proc.stdout + proc.stderr  # the typo's error, nothing worse
            kept = seed / "verl-preflight"
            for name in os.listdir(kept):
                if name not in DERIVED_FACTS:
                    path = kept / name
                    shutil.rmtree(path) if path.is_dir() else path.unlink()
            assert sorted(os.listdir(kept)) == sorted(DERIVED_FACTS), os.listdir(kept)
            (seed / "built").touch()
    return seed


def derived_facts_only(derived_facts_cache, folder):
    """`folder`, a new cache folder that holds the derived facts and nothing else."""
    import shutil

    shutil.copytree(derived_facts_cache / "verl-preflight", folder / "verl-preflight")
    return folder


def unkept_cache(derived_facts_cache, tree):
    """A new cache folder in `tree` with the derived facts only: where a run finds none of the
    tree's results, reports or command entries kept."""
    import tempfile

    return derived_facts_only(derived_facts_cache, Path(tempfile.mkdtemp(prefix="unkept", dir=tree)))


@pytest.fixture
def memo_tree(tmp_path, derived_facts_cache):
    """Two scripts, one of which sources a file: what the kept-report tests check and change.
    Its cache folder (tree/cache) starts with the derived facts only (no results, no reports)."""
    _write_memo_tree(tmp_path)
    derived_facts_only(derived_facts_cache, tmp_path / "cache")
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
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_folder(tmp_path_factory) / "xdg-cache"))
    wheels = os.path.join(ROOT, ".venv", "wheels")
    if os.path.isdir(wheels) and "VERL_PREFLIGHT_WHEELS" not in os.environ:  # a release a project pins: offline
        monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", wheels)
    if "VERL_PREFLIGHT_VERL_GIT" not in os.environ:  # a commit a project pins: never fetched from the network
        monkeypatch.setenv("VERL_PREFLIGHT_VERL_GIT", str(session_folder(tmp_path_factory) / "no-verl-git"))
    from verl_preflight.store import cache_files

    cache_files.use_disk(True)  # an earlier in-process `--no-cache` run left it off
