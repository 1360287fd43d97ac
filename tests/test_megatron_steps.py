"""The first steps of a Megatron training job, as the launch's verl and Megatron-Core run them.

- micro-batch-split, legacy Megatron workers (verl 0.4.0 wheel): the update iterates a
  data-parallel rank's batch in normalized mini batches, which DataProto.make_iterator
  asserts divide it; with a virtual pipeline, the micro batches of each step go to
  Megatron-Core's interleaved schedule, whose own checks (read from the megatron-core
  release the stack names) refuse too few.
- per-token-loss (verl 0.9.0 / 0.9.1 wheels and the installed 0.9.1): the Megatron
  engine's checks when Megatron computes the loss per token.
Wheels come from `make setup`; a test whose wheel is missing is skipped.
"""

from __future__ import annotations

import glob
import json
import os

import pytest
from conftest import ROOT
from conftest import run_cli as run

from verl_preflight.sources.megatron_schedule import interleaved_failure, schedule

WHEELS = os.path.join(ROOT, ".venv", "wheels")
ARF = "actor_rollout_ref"
LEGACY = [
    "--config-name=ppo_megatron_trainer",
    "algorithm.adv_estimator=grpo",
    "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
    "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
    "trainer.nnodes=1",
    "trainer.n_gpus_per_node=8",
]


def _wheel(package: str, version: str):
    found = glob.glob(os.path.join(WHEELS, "**", f"{package}-{version}-*.whl"), recursive=True)
    if not found:
        pytest.skip(f"no {package} {version} wheel in .venv/wheels (make setup)")


def findings(capsys, tmp_path, version, overrides, rule, *extra):
    _wheel("verl", version)
    os.environ["VERL_PREFLIGHT_WHEELS"] = WHEELS
    lines = "\n".join(f"    {o}" for o in overrides)
    path = tmp_path / "run.sh"
    path.write_text(f'#!/usr/bin/env bash\nARGS=(\n{lines}\n)\npython3 -m verl.trainer.main_ppo "${{ARGS[@]}}" "$@"\n')
    code, out, _ = run(capsys, "--format", "json", "--no-cache", "--verl", version, *extra, str(path))
    assert code in (0, 1)
    return [f for f in json.loads(out)["findings"] if f["rule"] == rule]


def test_megatron_update_mini_batches_must_divide_a_ranks_batch(capsys, tmp_path):
    over = [*LEGACY, "data.train_batch_size=24", "actor_rollout_ref.rollout.n=4"]
    bad = findings(capsys, tmp_path, "0.4.0", [*over, f"{ARF}.actor.ppo_mini_batch_size=16"], "micro-batch-split")
    assert [(f["key"], f["severity"]) for f in bad] == [(f"{ARF}.actor.ppo_mini_batch_size", "error")]
    assert "12 samples" in bad[0]["message"] and "12 % 8 != 0" in bad[0]["message"]
    assert "protocol.py:606" in bad[0]["message"]
    good = [*LEGACY, "data.train_batch_size=32", "actor_rollout_ref.rollout.n=4", f"{ARF}.actor.ppo_mini_batch_size=16"]
    assert not findings(capsys, tmp_path, "0.4.0", good, "micro-batch-split")


VPP = [
    *LEGACY,
    "data.train_batch_size=16",
    "actor_rollout_ref.rollout.n=2",
    f"{ARF}.actor.ppo_mini_batch_size=8",
    f"{ARF}.actor.megatron.tensor_model_parallel_size=2",
    f"{ARF}.actor.megatron.pipeline_model_parallel_size=2",
    f"{ARF}.actor.megatron.virtual_pipeline_model_parallel_size=2",
]
# 8 GPUs / (TP 2 x PP 2) = 2 data-parallel ranks: 16 rows a rank, normalized mini batch 8


def test_a_virtual_pipeline_needs_as_many_micro_batches_as_stages(capsys, tmp_path):
    _wheel("megatron_core", "0.12.0")
    one = [*VPP, f"{ARF}.actor.ppo_micro_batch_size_per_gpu=8"]  # the update: 8 rows in 1 micro batch
    got = findings(capsys, tmp_path, "0.4.0", one, "micro-batch-split", "--stack", "megatron-core=0.12.0")
    assert [(f["key"], f["severity"]) for f in got] == [(f"{ARF}.actor.ppo_micro_batch_size_per_gpu", "error")]
    assert "should range in [PP=2 , M=1]" in got[0]["message"] and "schedules.py:785" in got[0]["message"]
    # three micro batches for a pipeline of two: the final group is smaller than the pipeline
    three = [*VPP, f"{ARF}.actor.ppo_micro_batch_size_per_gpu=3"]
    got = findings(capsys, tmp_path, "0.4.0", three, "micro-batch-split", "--stack", "megatron-core=0.12.0")
    assert ["RuntimeError" in f["message"] for f in got] == [True]
    assert not findings(capsys, tmp_path, "0.4.0", [*VPP, f"{ARF}.actor.ppo_micro_batch_size_per_gpu=4"],
                        "micro-batch-split", "--stack", "megatron-core=0.12.0")


def test_the_schedule_verdict_is_a_warning_on_an_assumed_megatron_core(capsys, tmp_path):
    one = [*VPP, f"{ARF}.actor.ppo_micro_batch_size_per_gpu=8"]
    got = findings(capsys, tmp_path, "0.4.0", one, "micro-batch-split")
    assert [f["severity"] for f in got] == ["warning"] and "(default)" in got[0]["message"]
    no_vpp = [o for o in one if "virtual_pipeline" not in o]
    assert not findings(capsys, tmp_path, "0.4.0", no_vpp, "micro-batch-split")


def test_interleaved_schedule_checks_are_megatron_cores_own():
    _wheel("megatron_core", "0.12.0")
    os.environ["VERL_PREFLIGHT_WHEELS"] = WHEELS
    found = schedule("0.12.0")
    view = type("V", (), {"tree": {}, "raw": lambda s, k: None, "value": lambda s, k: None, "setting": lambda s, k: None})()
    assert interleaved_failure(view, found, 2, 2, 1, None).kind == "ValueError"
    assert interleaved_failure(view, found, 2, 2, 3, None).kind == "RuntimeError"
    assert interleaved_failure(view, found, 2, 2, 4, None) is None
    assert interleaved_failure(view, found, 2, None, 1, None) is None  # no virtual pipeline: no interleaving
    assert interleaved_failure(view, found, 2, 2, 3, 3) is None  # a group of 3 holds the 3 micro batches


ENGINE = [
    "model_engine=megatron",
    "algorithm.adv_estimator=grpo",
    "data.train_batch_size=32",
    "actor_rollout_ref.rollout.n=8",
    "actor_rollout_ref.model.path=Qwen/Qwen3.5-9B",
    f"{ARF}.actor.ppo_mini_batch_size=16",
    f"{ARF}.actor.ppo_micro_batch_size_per_gpu=1",
    f"{ARF}.rollout.log_prob_micro_batch_size_per_gpu=2",
    f"{ARF}.ref.log_prob_micro_batch_size_per_gpu=2",
    f"{ARF}.actor.megatron.tensor_model_parallel_size=8",
    f"{ARF}.rollout.tensor_model_parallel_size=8",
    "trainer.nnodes=2",
    "trainer.n_gpus_per_node=8",
]
SEQ_MEAN = f"{ARF}.actor.loss_agg_mode=seq-mean-token-mean"
CP2 = f"{ARF}.actor.megatron.context_parallel_size=2"
PER_TOKEN = f"+{ARF}.actor.megatron.override_transformer_config.calculate_per_token_loss=True"


def test_seq_mean_token_mean_with_a_per_token_loss(capsys, tmp_path):
    got = findings(capsys, tmp_path, "0.9.0", [*ENGINE, SEQ_MEAN, CP2], "per-token-loss")
    assert [(f["key"], f["severity"]) for f in got] == [(f"{ARF}.actor.loss_agg_mode", "warning")]
    assert "if Megatron-Bridge turns calculate_per_token_loss on" in got[0]["message"] and "transformer_impl.py:1447" in got[0]["message"]
    got = findings(capsys, tmp_path, "0.9.0", [*ENGINE, SEQ_MEAN, PER_TOKEN], "per-token-loss")
    assert [(f["key"], f["severity"]) for f in got] == [(f"{ARF}.actor.loss_agg_mode", "error")]
    dynamic = f"{ARF}.actor.megatron.dynamic_context_parallel=True"
    assert not findings(capsys, tmp_path, "0.9.0", [*ENGINE, SEQ_MEAN, CP2, dynamic], "per-token-loss")
    assert not findings(capsys, tmp_path, "0.9.0", [*ENGINE, CP2], "per-token-loss")
    vanilla = f"{ARF}.actor.megatron.vanilla_mbridge=True"
    assert not findings(capsys, tmp_path, "0.9.0", [*ENGINE, SEQ_MEAN, CP2, vanilla], "per-token-loss")


def test_verl_091_keeps_only_the_bshd_check(capsys, tmp_path):
    assert not findings(capsys, tmp_path, "0.9.1", [*ENGINE, SEQ_MEAN, PER_TOKEN], "per-token-loss")
    bshd = f"{ARF}.actor.megatron.use_remove_padding=False"
    got = findings(capsys, tmp_path, "0.9.1", [*ENGINE, bshd, PER_TOKEN], "per-token-loss")
    assert [(f["key"], f["severity"]) for f in got] == [(f"{ARF}.actor.megatron.use_remove_padding", "error")]
