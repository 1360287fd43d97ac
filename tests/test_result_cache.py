"""The per-script result cache: a changed input re-checks exactly the scripts that depend on it.

Each case runs the real pipeline twice over a small tree of scripts with a fresh
cache folder, changes one input, and counts which scripts were checked again.
"""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import ROOT

from verl_preflight.hydra_stage.tree import ConfigCache, ConfigCaches, locate
from verl_preflight.result_cache import ResultCache
from verl_preflight.rules.schema import load_schema
from verl_preflight.runner import run_files
from verl_preflight.validate import Options

LAUNCH = 'python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "${A[@]}" "$@"\n'


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "lib.sh").write_text("A=(trainer.total_epochs=2)\n")
    (tmp_path / "uses_lib.sh").write_text("#!/usr/bin/env bash\nsource ./lib.sh\n" + LAUNCH)
    (tmp_path / "alone.sh").write_text("#!/usr/bin/env bash\nA=(trainer.total_epochs=3)\n" + LAUNCH)
    monkeypatch.chdir(tmp_path)
    return tmp_path


class Run:
    """One validator run over the tree: which scripts were checked (not taken from the cache)."""

    def __init__(self, source=None, **options):
        self.source = source or locate(None)
        self.options = options

    def __call__(self, files):
        opts = Options(schema=load_schema(self.options.pop("schema", None)), **self.options)
        caches = ConfigCaches(ConfigCache(self.source, use_disk=True))
        results_cache = ResultCache(self.source, caches.main.digest, opts)
        before = results_cache.hits
        results, _ = run_files(files, caches, opts, 1, results_cache)
        self.checked = len(files) - (results_cache.hits - before)
        return results


FILES = ["uses_lib.sh", "alone.sh"]


def checked(**options) -> int:
    run = Run(**options)
    run(FILES)
    return run.checked


def test_an_unchanged_tree_is_not_checked_again(tree):
    assert checked() == 2
    assert checked() == 0


def test_editing_a_sourced_file_rechecks_only_its_users(tree):
    checked()
    (tree / "lib.sh").write_text("A=(trainer.total_epochs=5)\n")
    assert checked() == 1
    assert checked() == 0


def test_a_cached_result_is_the_same_result(tree):
    first = Run()(FILES)
    second = Run()(FILES)
    assert [(r.path, r.findings, [p.profile for p in r.profiles]) for r in first] == [
        (r.path, r.findings, [p.profile for p in r.profiles]) for r in second
    ]


def test_an_option_the_stack_or_the_schema_rechecks_everything(tree):
    checked()
    assert checked(max_profiles=8) == 2
    assert checked(stack={"megatron-core": "0.18.0"}) == 2
    schema = tree / "policy.yaml"
    schema.write_text("extends: default\nversion: 1\npolicies: []\n")
    assert checked(schema=str(schema)) == 2
    assert checked(schema=str(schema)) == 0
    schema.write_text("extends: default\nversion: 1\npolicies:\n  - {id: parallelism, severity: warning}\n")
    assert checked(schema=str(schema)) == 2


def test_another_config_tree_rechecks_everything(tree):
    checked()
    copy = tree / "config"
    shutil.copytree(locate(None).path, copy)
    assert checked(source=locate(str(copy))) == 2
    assert checked(source=locate(str(copy))) == 0
    with open(copy / "ppo_trainer.yaml", "a", encoding="utf-8") as fh:
        fh.write("\n# touched\n")
    assert checked(source=locate(str(copy))) == 2


def test_a_corrupt_or_foreign_cache_is_rebuilt(tree):
    checked()
    folder = tree / "cache" / "verl-preflight" / "results"
    entries = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs]
    assert len(entries) == 2
    with open(entries[0], "wb") as fh:
        fh.write(b"\x80\x04not a pickle")
    with open(entries[1], "wb") as fh:
        import pickle

        pickle.dump({"format": 1, "key": "someone else's", "deps": {}, "result": None}, fh)
    assert checked() == 2
    assert checked() == 0


def test_profile_current_is_never_cached(tree):
    assert checked(current=True) == 2
    assert checked(current=True) == 2


def test_the_cli_gives_the_same_output_warm(tree, capsys):
    from verl_preflight.cli import main

    example = os.path.join(ROOT, "examples", "grpo_trainer", "run_qwen3_5_35b_megatron.sh")
    main(["--format", "json", example, *FILES])
    cold = capsys.readouterr().out
    main(["--format", "json", example, *FILES])
    assert capsys.readouterr().out == cold


def test_a_fully_warm_run_loads_neither_hydra_nor_the_composition_cache(tree):
    """An unchanged tree: every result from the cache, so nothing of Hydra or OmegaConf is
    imported and the compositions kept on disk are not read (interpreter start-up and the
    result cache are all a warm run costs)."""
    import json
    import subprocess
    import sys

    probe = (
        "import sys, builtins\n"
        f"sys.path.insert(0, {os.path.join(ROOT, 'src')!r})\n"
        "opened = []\n"
        "real_open = builtins.open\n"
        "def spy(file, *a, **k):\n"
        "    opened.append(str(file))\n"
        "    return real_open(file, *a, **k)\n"
        "builtins.open = spy\n"
        "from verl_preflight.cli import main\n"
        "code = main(['--format', 'json', *sys.argv[1:]])\n"
        "builtins.open = real_open\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('hydra', 'omegaconf', 'antlr4'))\n"
        "print(__import__('json').dumps({'loaded': loaded, 'opened': opened}), file=sys.stderr)\n"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(tree / "cache"))
    first = subprocess.run([sys.executable, "-c", probe, *FILES], capture_output=True, text=True, env=env)
    assert json.loads(first.stderr.strip().splitlines()[-1])["loaded"]  # the cold run composes
    warm = subprocess.run([sys.executable, "-c", probe, *FILES], capture_output=True, text=True, env=env)
    seen = json.loads(warm.stderr.strip().splitlines()[-1])
    assert seen["loaded"] == []
    compositions = os.path.join(str(tree / "cache"), "verl-preflight")
    assert not [p for p in seen["opened"] if p.startswith(compositions) and p.endswith(".json")]
    assert warm.stdout == first.stdout
