"""Model shapes from config.json, --model-config, --device-memory, --profile current, render's summary.

The formulas themselves are checked against the reference scripts in
tests/test_reference_suite.py; here: where the shape comes from and the options
that feed the model-shape and memory-estimate rules.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
from conftest import FIXTURES
from conftest import run_cli as run

from verl_preflight.target import memory as mem
from verl_preflight.target.layout import (
    Role,
    head_problems,
    model_for,
    models,
    pipeline_problem,
    shape_from_config,
    shape_from_table,
    stage_layers,
)

MODELS = os.path.join(FIXTURES, "models")
TINY = os.path.join(MODELS, "tiny-moe")
HYBRID = os.path.join(MODELS, "hybrid-gdn")
NO_CPU_OPTIMIZER = os.path.join(FIXTURES, "regressions", "layout", "qwen3_5_35b_gpu_no_cpu_optimizer.sh")


def findings(capsys, *argv) -> list[dict]:
    code, out, _ = run(capsys, "--format", "json", "--no-cache", *argv)
    assert code in (0, 1)
    return json.loads(out)["findings"]


def script(tmp_path, model_path: str, *overrides: str) -> str:
    path = tmp_path / "run.sh"
    args = " ".join(overrides)
    path.write_text(
        "#!/usr/bin/env bash\nset -euo pipefail\n"
        f"MODEL_PATH=${{MODEL_PATH:-{model_path}}}\n"
        "python3 -m verl.trainer.main_ppo model_engine=megatron "
        'actor_rollout_ref.model.path="$MODEL_PATH" '
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "
        "actor_rollout_ref.actor.megatron.use_mbridge=True "
        f'trainer.nnodes=1 trainer.n_gpus_per_node=8 {args} "$@"\n'
    )
    return str(path)


def test_shape_of_a_config_json_and_its_parameter_estimate():
    shape = shape_from_config(TINY)
    assert (shape.layers, shape.attention_heads, shape.query_groups, shape.experts) == (30, 16, 4, 60)
    assert shape.gdn_qk_heads is None and shape.name == "tiny-moe"
    # per layer: q,k,v,o 2x1024x16x64 + 2x1024x4x64 = 2,621,440; router 1024x60 = 61,440;
    # an expert 3x1024x512 = 1,572,864. Embeddings in and out: 2x32000x1024 = 65,536,000.
    # total 30 x (2,682,880 + 60 x 1,572,864) + 65,536,000 = 2,977,177,600
    # active 30 x (2,682,880 + 4 x 1,572,864) + 65,536,000 = 334,766,080
    c = mem.counts(shape.arch)
    assert (round(c.total / 1e9, 2), round(c.active / 1e9, 2)) == (2.98, 0.33)


def test_a_nested_text_config_with_gated_deltanet_heads():
    shape = shape_from_config(HYBRID)
    assert (shape.layers, shape.attention_heads, shape.query_groups) == (24, 16, 2)
    assert (shape.gdn_qk_heads, shape.gdn_v_heads, shape.experts) == (12, 24, 64)
    assert shape.gdn and not shape_from_config(TINY).gdn
    assert shape.arch is None  # hybrid layers: no estimate, so no memory estimate
    assert head_problems(shape, 8) == [
        "12 Gated DeltaNet key heads are not divisible by TP=8",
    ]
    assert head_problems(shape, 4) == []  # 2 query groups: a divisor of TP 4 is fine (KV heads replicated)


TABLE_ONLY = ("match", "variants", "source", "qk_norm", "total_params_b", "active_params_b")


@pytest.mark.parametrize("name", sorted(models()))
def test_a_table_entry_written_out_as_a_config_json_is_the_same_shape(tmp_path, name):
    """models.yaml's shape fields are config.json's: read as one, an entry gives the table's shape."""
    config = {k: v for k, v in models()[name].items() if k not in TABLE_ONLY}
    assert models()[name]["qk_norm"] is True  # as a config.json says it: a qwen3* model_type
    config["model_type"] = "qwen3_moe"
    (tmp_path / name).mkdir()
    (tmp_path / name / "config.json").write_text(json.dumps(config))
    got = shape_from_config(str(tmp_path / name))
    assert got.arch is not None and got.source != "models.yaml"
    assert replace(got, source="models.yaml") == shape_from_table(name)


def test_model_for_matches_the_path_leaf_longest_name_first():
    assert model_for("/data/Qwen3-235B-A22B-Instruct-2507/") == "Qwen3-235B-A22B"
    assert model_for("${HOME}/models/qwen3.5-35b-a3b") == "Qwen3.5-35B-A3B"
    assert model_for("/models/Qwen3-235B-A22B/other") is None  # only the last component counts
    assert model_for("Qwen/Qwen3-8B") is None


def test_pipeline_split_with_virtual_stages():
    assert stage_layers(94, 16, 5, 5) == [5] + [6] * 14 + [5]
    assert pipeline_problem(94, Role(2, 16, 1, 1, 2, 5, 5, 2)) is not None  # 5 % 2
    assert pipeline_problem(96, Role(2, 16, 1, 1, 2, None, None, 2)) is None  # 6 a stage, 3 per virtual stage
    assert pipeline_problem(94, Role(2, 16, 1, 1, 2, 0, 5)) is not None  # a stage of 0 layers is refused


def test_the_embedding_and_loss_count_as_layers_where_the_split_says_so():
    """verl v0.7.0 examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh: 94 layers over PP=8 with
    account_for_embedding/loss_in_pipeline_split is 96 over 8 (megatron-core transformer_block.py:140-152)."""
    assert pipeline_problem(94, Role(4, 8, 1, 4, 1)) is not None
    assert pipeline_problem(94, Role(4, 8, 1, 4, 1, counted=2)) is None
    assert "1 counted for the embedding" in pipeline_problem(94, Role(4, 8, 1, 4, 1, counted=1))
    assert pipeline_problem(94, Role(4, 8, 1, 4, 1, given_layout=True)) is None


def test_model_config_option_gives_the_shape(tmp_path, capsys):
    path = script(
        tmp_path,
        "/models/my-finetune",
        "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=8",
        "actor_rollout_ref.actor.megatron.expert_model_parallel_size=8",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=8",
    )
    # the model path names no known model: nothing is checked, nothing reported
    assert [f for f in findings(capsys, path) if f["rule"] in ("model-shape", "memory-estimate")] == []
    found = [f for f in findings(capsys, "--model-config", HYBRID, path) if f["rule"] == "model-shape"]
    assert [f["message"] for f in found] == [
        "hybrid-gdn (config.json), actor: 12 Gated DeltaNet key heads are not divisible by TP=8"
    ]
    found = [f for f in findings(capsys, "--model-config", TINY, path) if f["rule"] == "model-shape"]
    assert len(found) == 1 and "60 experts are not divisible by EP=8" in found[0]["message"]


def test_model_config_must_hold_a_config_json(tmp_path, capsys):
    path = script(tmp_path, "/models/x")
    code, _, err = run(capsys, "--model-config", str(tmp_path), path)
    assert code == 2 and "--model-config" in err and "config.json" in err
    code, _, err = run(capsys, "--device-memory", "0", path)
    assert code == 2 and "--device-memory" in err


def test_profile_current_reads_the_model_path_config(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MODEL_PATH", TINY)
    path = script(tmp_path, "/models/unknown", "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=4")
    found = [f for f in findings(capsys, "--profile", "current", path) if f["rule"] == "model-shape"]
    assert len(found) == 1 and "30 layers do not split evenly over PP=4" in found[0]["message"]
    # enumerated profiles do not read the machine's files: the path's name is not known
    assert [f for f in findings(capsys, path) if f["rule"] == "model-shape"] == []


@pytest.mark.parametrize(("memory", "expected"), [(None, "= 88.0 GB > 80 GB"), ("96", None), ("64", "> 64 GB")])
def test_device_memory_option(memory, expected, capsys):
    argv = ["--device-memory", memory] if memory else []
    found = [f for f in findings(capsys, *argv, NO_CPU_OPTIMIZER) if f["rule"] == "memory-estimate"]
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and expected in found[0]["message"] and found[0]["severity"] == "warning"
        assert found[0]["message"].startswith("estimate: ")


def test_render_summary_is_comments(capsys):
    code, out, _ = run(capsys, "render", "--no-cache", "--device", "gpu", "--device-memory", "96", NO_CPU_OPTIMIZER)
    assert code == 0
    summary = [ln for ln in out.splitlines() if ln.startswith("#   ")]
    assert summary == [
        "#   target: verl 0.9.1 (installed); device gpu (--device gpu); megatron-core 0.16.1 (default)",
        "#   devices: 1 node x 8 = 8 GPUs (96 GB each, --device-memory)",
        "#   trainer (megatron): TP 2, PP 1, CP 1, EP 8, ETP 1, DP 4",
        "#   rollout: TP 8, DP 1, EP 1, 1 replica of 8 devices",
        "#   model: Qwen3.5-35B-A3B (shipped shape table)",
        "#   memory estimate per device (~: estimated from the workload; the rest counted from the model's 35.1B "
        "parameters, 2.9B not in routed experts):",
        "#     actor update, worst stage 1/1 (40 layers, embedding, vision tower, LM head): weights 11.0 + grads 21.9 "
        "+ optimizer 52.7 (over 4 / 1 DP shards) + ~activations 1.1 (1 x 1024 tokens, no full recompute, 1 micro "
        "batch in flight) + ~logits 1.3 (10 B x 1024 x 248320/2) = 88.0 GB of 96 GB",
        "#     actor log-prob pass, worst stage 1/1 (40 layers, embedding, vision tower, LM head): weights 11.0 + "
        "~activations 0.0 (1 x 1024 tokens) + ~logits 0.8 (6 B x 1024 x 248320/2) = 11.8 GB of 96 GB",
        "#     rollout: weights 8.8 + KV cache for one 262144-token sequence 2.7 = 11.5 GB of 0.6 x 96 = 57.6 GB "
        "(max_model_len: the model's max_position_embeddings)",
        "#     rollout batch: 160 sequences a TP group of up to 1024 tokens need 3.0 GB of KV cache and state (fewer "
        "fit: the engine queues the rest)",
    ]
    assert all(ln.startswith("#") for ln in out.splitlines() if ln and not ln.startswith(("python3", "    ")))


def test_a_launchs_layout_is_worked_out_once_for_the_rules_that_read_it(capsys, monkeypatch):
    """model-shape and memory-estimate both read the launch's layout: one working-out a launch,
    the same findings as before (a warning of memory-estimate on this script)."""
    from verl_preflight.target import layout

    views = []
    real = layout.launch_layout
    monkeypatch.setattr(layout, "launch_layout", lambda view, opts: views.append(view) or real(view, opts))
    assert [(f["rule"], f["severity"]) for f in findings(capsys, NO_CPU_OPTIMIZER)] == [("memory-estimate", "warning")]
    assert len(views) == 1
