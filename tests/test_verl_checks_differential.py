"""Differential test: the verl-check and config-value verdicts agree with verl's own start-up checks.

The oracle is the real code of verl releases (tests/oracle/verl_start_checks.py): the release's
wheel that setup downloaded (or the installed 0.9.1) is imported in a subprocess with its heavy
dependencies replaced by inert stand-ins, each launch is composed by real Hydra, and the checks
the release's entry point runs at start are called (`validate_config` with `need_reference_policy`
and `need_critic`; in releases before it, RayPPOTrainer's `_validate_config` with the constructor's
own decisions).

The launches: generated ones (batch sizes, micro batches, dynamic batch size, the Megatron layout,
the world, rollout.n, the advantage estimator, KL, the critic, loss modes, sampling), and those of
the corpora (../shared/corpus) that are fully known. For each launch that composes:
- where verl raises, the validator reports an error of verl-check or config-value, and one of them
  names the file and line verl raised at;
- where verl does not raise, the validator reports no such error.

What the validator leaves unknown by design is listed in OUT_OF_REACH with the reason; the test
fails on any other disagreement, and on an out-of-reach case that no longer occurs.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import subprocess
import sys
import zipfile

import pytest
from conftest import ROOT, SHARED

from verl_preflight.app.cli import main

pytestmark = pytest.mark.slow  # the slow tier (make test-slow): verl's own start-up code run over generated and corpus launches

ORACLE = os.path.join(ROOT, "tests", "oracle", "verl_start_checks.py")
WHEELS = os.path.join(ROOT, ".venv", "wheels")
RULES = ("verl-check", "config-value")
SEED = 20261201
N_GENERATED = 160 if os.environ.get("CI") else 40  # per release; CI runs more


def _release(version: str, tmp_root) -> tuple[str, str] | None:
    """(dir holding the release's `verl` package, its trainer/config) or None when absent here."""
    if version == "0.9.1":
        import importlib.util

        spec = importlib.util.find_spec("verl")
        if spec is None or not spec.submodule_search_locations:
            return None
        package = list(spec.submodule_search_locations)[0]
        return os.path.dirname(package), os.path.join(package, "trainer", "config")
    wheel = next((f for f in os.listdir(WHEELS) if f.startswith(f"verl-{version}-")), None) if os.path.isdir(WHEELS) else None
    if wheel is None:
        return None
    target = os.path.join(str(tmp_root), f"verl-{version}")
    if not os.path.isdir(target):
        with zipfile.ZipFile(os.path.join(WHEELS, wheel)) as zf:
            zf.extractall(target, [n for n in zf.namelist() if n.startswith("verl/")])
    return target, os.path.join(target, "verl", "trainer", "config")


def _generated(rng: random.Random, version: str) -> list[tuple[str, list[str]]]:
    """Launches that exercise what the start-up checks read."""
    out = []
    megatron_name = "ppo_megatron_trainer"
    for _ in range(N_GENERATED):
        ov = {}
        ov["data.train_batch_size"] = rng.choice([16, 60, 64, 128, 256, 256, 512])
        ov["actor_rollout_ref.actor.ppo_mini_batch_size"] = rng.choice([8, 16, 32, 64, 64, 128, 256])
        per_gpu = rng.choice([None, 1, 2, 2, 4, 4, 8, 3, "null"])
        if per_gpu is not None:
            ov["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"] = per_gpu
        if rng.random() < 0.12:
            ov["actor_rollout_ref.actor.ppo_micro_batch_size"] = rng.choice([3, 8, 16])
        if rng.random() < 0.3:
            ov["actor_rollout_ref.actor.use_dynamic_bsz"] = rng.choice([True, False])
        if rng.random() < 0.85:
            ov["actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu"] = rng.choice([2, 4])
        if rng.random() < 0.1:
            ov["actor_rollout_ref.rollout.log_prob_micro_batch_size"] = 16
        if rng.random() < 0.85:
            ov["actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu"] = 4
        if rng.random() < 0.8:
            ov["algorithm.adv_estimator"] = rng.choice(["grpo", "grpo", "grpo", "rloo", "gae", "grpo_x"])
        if rng.random() < 0.4:
            ov["actor_rollout_ref.actor.use_kl_loss"] = rng.choice([True, False])
        if rng.random() < 0.4:
            ov["critic.ppo_micro_batch_size_per_gpu"] = rng.choice([2, 4])
        ov["trainer.n_gpus_per_node"] = rng.choice([8, 8, 8, 6, 4])
        ov["trainer.nnodes"] = rng.choice([1, 1, 2])
        ov["actor_rollout_ref.rollout.n"] = rng.choice([1, 5, 8])
        if rng.random() < 0.2:
            ov["actor_rollout_ref.actor.loss_agg_mode"] = rng.choice(["token-mean", "seq-mean-token-sum", "token_mean"])
        if rng.random() < 0.15:
            ov["actor_rollout_ref.rollout.val_kwargs.do_sample"] = True
            ov["actor_rollout_ref.rollout.temperature"] = rng.choice([0, 0.7])
        megatron = rng.random() < 0.35
        if megatron:
            ov["actor_rollout_ref.actor.megatron.tensor_model_parallel_size"] = rng.choice([1, 2, 2, 4, 3])
            ov["actor_rollout_ref.actor.megatron.pipeline_model_parallel_size"] = rng.choice([1, 2])
            ov["actor_rollout_ref.actor.megatron.context_parallel_size"] = rng.choice([1, 1, 2])
        elif rng.random() < 0.2:
            ov["actor_rollout_ref.actor.ulysses_sequence_parallel_size"] = 2
            if rng.random() < 0.5:
                ov["actor_rollout_ref.model.use_remove_padding"] = True
        overrides = [f"{k}={'null' if v is None else v}" for k, v in ov.items()]
        out.append((megatron_name if megatron else "ppo_trainer", overrides))
    return out


def _corpus_launches(corpus: str, config_dir: str) -> list[tuple[str, list[str]]]:
    """The fully known launches of one corpus, as the validator extracts them."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["--format", "json", "--no-cache", "-j", "1", "--verl-config", config_dir, corpus])
    doc = json.loads(buf.getvalue())
    out, seen = [], set()
    for script in doc["scripts"]:
        for profile in script["profiles"]:
            for launch in profile["launches"]:
                if launch["module"] != "verl.trainer.main_ppo" or not launch["config_name"]:
                    continue
                overrides = _known(launch)
                if overrides is None:
                    continue
                key = (launch["config_name"], tuple(overrides))
                if key not in seen:
                    seen.add(key)
                    out.append((launch["config_name"], list(overrides)))
    return out


_NAMES = re.compile(r"(files|path|dir|name|logger|project_name|experiment_name)$")


def _known(launch: dict) -> list[str] | None:
    """The launch's overrides with the values known only at run time that no start-up check reads
    (data files, model and checkpoint paths, run names) given as placeholder text; None when an
    unknown is anywhere else (a batch size from the environment: verl's verdict depends on it)."""
    out = []
    for text, parts in zip(launch["overrides"], launch.get("unknown_parts") or [None] * len(launch["overrides"]),
                           strict=True):
        if parts is None:
            out.append(text)
            continue
        key = text.split("=", 1)[0].lstrip("+~")
        if not _NAMES.search(key.rsplit(".", 1)[-1]):
            return None
        out.append("".join(p if isinstance(p, str) else "unknown" for p in parts))
    return out


def _oracle(verl_dir: str, config_dir: str, launches) -> list[dict]:
    request = {
        "verl": verl_dir,
        "config_dir": config_dir,
        "launches": [{"config_name": name, "overrides": ov} for name, ov in launches],
    }
    proc = subprocess.run(
        [sys.executable, ORACLE], input=json.dumps(request), capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


_AT_START = re.compile(r"stops at start: \w+ at verl/")


def _validator(config_dir: str, launches, tmp_path) -> list[list[dict]]:
    """The validator's errors for each launch (each written as a script of its own) that say verl's
    start-up checks stop it: verl-check's, and config-value's from the same evaluation. (A registry
    lookup that fails at the first step, a worker's own check, are other rules' and other tests'.)"""
    import contextlib
    import io

    folder = tmp_path / "launches"
    folder.mkdir()
    for i, (name, overrides) in enumerate(launches):
        words = " ".join(shlex.quote(o) for o in overrides)
        (folder / f"l{i:04d}.sh").write_text(
            f'#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo --config-name={name} {words} "$@"\n'
        )
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["--format", "json", "--no-cache", "--verl-config", config_dir, str(folder)])
    doc = json.loads(buf.getvalue())
    out = [[] for _ in launches]
    for f in doc["findings"]:
        if f["rule"] in RULES and f["severity"] == "error" and _AT_START.search(f["message"]):
            out[int(os.path.basename(f["path"])[1:5])].append(f)
    return out


# What the validator leaves unknown by design (verl raises, the validator says nothing), by release
# and verl's file:line. Each entry says why; the test fails when one no longer occurs.
OUT_OF_REACH = {
    ("0.4.1", "trainer/ppo/ray_trainer.py"): (
        "the reference policy's checks: v0.4.1 decides use_reference_policy from the Ray role mapping "
        "main_ppo builds (Role.RefPolicy in role_worker_mapping), which the evaluator does not follow"
    ),
}


_CITED = re.compile(r"verl/([\w/]+\.py):(\d+)")


def _cites(message: str, real: dict, verl_dir: str) -> bool:
    """Whether the finding names the statement verl raised in: the file, and a line of the
    statement that starts at the cited line (a traceback may show a later line of it)."""
    for path, line in _CITED.findall(message):
        if path != real["path"]:
            continue
        span = _statement_span(os.path.join(verl_dir, "verl", path), int(line))
        if span[0] <= real["line"] <= span[1]:
            return True
    return False


def _statement_span(path: str, line: int) -> tuple[int, int]:
    import ast

    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno == line and not isinstance(node, ast.If | ast.For):
            return node.lineno, node.end_lineno or node.lineno
    return line, line


def _disagreements(version: str, launches, oracle, validator, verl_dir: str) -> tuple[list[str], set]:
    problems, excused = [], set()
    for (name, overrides), real, found in zip(launches, oracle, validator, strict=True):
        if not real["composed"]:
            continue
        shown = f"{name} {' '.join(overrides)}"
        if real["raised"]:
            if real["path"] is None:
                problems.append(f"verl {version}: the oracle raised outside verl ({real['type']}: {real['message']}): {shown}")
                continue
            cited = f"verl/{real['path']}:{real['line']}"
            if any(_cites(f["message"], real, verl_dir) for f in found):
                continue
            reason = OUT_OF_REACH.get((version, real["path"]))
            if reason and not found:
                excused.add((version, real["path"]))
                continue
            problems.append(
                f"verl {version} raises {real['type']} at {cited} ({real['message'][:200]}); the validator "
                f"says {[f['message'][:160] for f in found] or 'nothing'}: {shown}"
            )
        elif found:
            problems.append(
                f"verl {version} passes; the validator reports {[f['message'][:200] for f in found]}: {shown}"
            )
    return problems, excused


VERSIONS = ["0.9.1", "0.8.0", "0.7.0", "0.4.1"]


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_launches_agree_with_verl(version, tmp_path, tmp_path_factory):
    release = _release(version, tmp_path_factory.getbasetemp())
    if release is None:
        pytest.skip(f"verl {version} is not here (make setup downloads its wheel)")
    verl_dir, config_dir = release
    launches = _generated(random.Random(f"{SEED}-{version}"), version)
    oracle = _oracle(verl_dir, config_dir, launches)
    composed = sum(a["composed"] for a in oracle)
    raised = sum(a["raised"] for a in oracle)
    assert composed >= len(launches) // 2, "most generated launches must compose, or the test checks little"
    assert 0 < raised < composed, "the launches must both pass and fail verl's checks"
    problems, excused = _disagreements(version, launches, oracle, _validator(config_dir, launches, tmp_path), verl_dir)
    print(f"verl {version}: {len(launches)} launches, {composed} compose, verl raises on {raised}, out of reach {excused}")
    assert not problems, "\n".join(problems[:20])


CORPORA = [("verl-v0.7.0", "0.7.0"), ("verl-v0.4.1", "0.4.1"), ("logic-rl", "0.4.1")]


@pytest.mark.parametrize("corpus,version", CORPORA)
def test_corpus_launches_agree_with_verl(corpus, version, tmp_path, tmp_path_factory):
    path = os.path.join(SHARED, "corpus", corpus)
    if not os.path.isdir(path):
        pytest.skip("../shared/corpus is not here (a clone without the shared folder)")
    release = _release(version, tmp_path_factory.getbasetemp())
    if release is None:
        pytest.skip(f"verl {version} is not here (make setup downloads its wheel)")
    verl_dir, config_dir = release
    launches = _corpus_launches(path, config_dir)
    assert launches, "the corpus gives launches"
    oracle = _oracle(verl_dir, config_dir, launches)
    problems, _ = _disagreements(version, launches, oracle, _validator(config_dir, launches, tmp_path), verl_dir)
    composed = sum(a["composed"] for a in oracle)
    print(f"{corpus} on verl {version}: {len(launches)} launches, {composed} compose, "
          f"verl raises on {sum(a['raised'] for a in oracle)}")
    assert not problems, "\n".join(problems[:20])
