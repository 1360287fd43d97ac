"""Rules that depend on the stack: each stack case has a failing and a passing script.

The stack of a launch is resolved per profile (README, "The stack"): --stack,
the installed packages under --profile current, the script header and
requirements-ascend.txt on the MindSpeed-Bridge path, then stated defaults.
"""

from __future__ import annotations

import json

import pytest

from verl_preflight.app.cli import main

OTC = "actor_rollout_ref.actor.megatron.override_transformer_config"
BASE = "model_engine=megatron actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 data.train_batch_size=512"


def script(tmp_path, body: str, name: str = "run.sh") -> str:
    path = tmp_path / name
    path.write_text("#!/usr/bin/env bash\nset -euo pipefail\n" + body)
    return str(path)


def findings(capsys, *args) -> list[dict]:
    main(["--format", "json", "--no-cache", *args])
    return json.loads(capsys.readouterr().out)["findings"]


def device_script(tmp_path, key: str) -> str:
    return script(
        tmp_path,
        'DEVICE=${DEVICE:-gpu}\nARGS=()\ncase "$DEVICE" in\n  gpu) ;;\n  npu) ARGS+=(trainer.device=npu) ;;\n'
        "  *) exit 1 ;;\nesac\n"
        f'python3 -m verl.trainer.main_ppo {BASE} "${{ARGS[@]}}" +{OTC}.{key}=True "$@"\n',
    )


@pytest.mark.parametrize("key", ["context_parallel_algo", "use_ascend_mc2", "use_fused_rmsnorm"])
def test_mindspeed_arguments_are_valid_on_ascend_and_fail_on_gpu(tmp_path, capsys, key):
    path = device_script(tmp_path, key)
    gpu = [f for f in findings(capsys, "--profile", "DEVICE=gpu", path) if f["rule"] == "transformer-config-key"]
    assert len(gpu) == 1 and "raises AttributeError at start" in gpu[0]["message"]
    assert "megatron-core 0.16.1" in gpu[0]["message"] and gpu[0]["severity"] == "error"
    npu = [f for f in findings(capsys, "--profile", "DEVICE=npu", path) if f["rule"] == "transformer-config-key"]
    assert npu == []


def test_a_mindspeed_argument_of_another_branch_is_not_valid(tmp_path, capsys):
    """use_naive_l2norm exists on MindSpeed core_r0.16.0 only."""
    path = device_script(tmp_path, "use_naive_l2norm")
    assert not [f for f in findings(capsys, "--profile", "DEVICE=npu", path) if f["severity"] == "error"]
    pinned = findings(capsys, "--profile", "DEVICE=npu", "--stack", "mindspeed=core_r0.18.0", path)
    assert [f["rule"] for f in pinned] == ["transformer-config-key"]
    assert "MindSpeed core_r0.18.0" in pinned[0]["message"]


def test_megatron_core_version_decides_a_field(tmp_path, capsys):
    """fused_residual_rmsnorm is a TransformerConfig field from megatron-core 0.17 on."""
    path = device_script(tmp_path, "fused_residual_rmsnorm")
    old = findings(capsys, "--profile", "DEVICE=gpu", path)
    assert [f["rule"] for f in old] == ["transformer-config-key"]
    new = findings(capsys, "--profile", "DEVICE=gpu", "--stack", "megatron-core=0.18.0", path)
    assert new == []


def test_mbridge_fails_with_a_type_error(tmp_path, capsys):
    path = script(
        tmp_path,
        f"python3 -m verl.trainer.main_ppo {BASE} actor_rollout_ref.actor.megatron.vanilla_mbridge=True "
        f'+{OTC}.recompute_granularty=full "$@"\n',
    )
    (f,) = findings(capsys, path)
    assert "mbridge" in f["message"] and "TypeError" in f["message"]


def test_a_stack_without_data_warns_instead_of_guessing(tmp_path, capsys):
    path = device_script(tmp_path, "brand_new_knob")
    found = findings(capsys, "--profile", "DEVICE=gpu", "--stack", "megatron-core=0.99.0", path)
    assert [(f["rule"], f["severity"]) for f in found] == [("stack-unknown", "warning")]
    assert "megatron-core 0.99.0 (--stack)" in found[0]["message"]


def test_the_mindspeed_bridge_path_reads_the_header(tmp_path, capsys):
    """On DEVICE=npu with USE_MINDSPEED_BRIDGE=True the header's Megatron-LM core_v0.18.0 applies."""
    header = (
        "# Requirements on Ascend with MindSpeed-Bridge (USE_MINDSPEED_BRIDGE=True)\n"
        "#   - Megatron-LM core_v0.18.0\n#   - MindSpeed core_r0.18.0\n#\n"
    )
    body = (
        header + "USE_MINDSPEED_BRIDGE=${USE_MINDSPEED_BRIDGE:-False}\nARGS=(trainer.device=npu)\n"
        'if [ "$USE_MINDSPEED_BRIDGE" = "True" ]; then ARGS+=(+' + OTC + ".fused_residual_rmsnorm=True); fi\n"
        f'python3 -m verl.trainer.main_ppo {BASE} "${{ARGS[@]}}" "$@"\n'
    )
    path = script(tmp_path, body)
    assert findings(capsys, path) == []


def test_settings_name_the_stack(tmp_path, capsys, monkeypatch):
    path = device_script(tmp_path, "fused_residual_rmsnorm")
    (tmp_path / "pyproject.toml").write_text('[tool.validate-scripts]\nstack = {megatron-core = "0.18.0"}\n')
    monkeypatch.chdir(tmp_path)
    assert findings(capsys, "--profile", "DEVICE=gpu", path) == []


def test_bad_stack_option_is_a_usage_error(tmp_path, capsys):
    path = device_script(tmp_path, "fused_residual_rmsnorm")
    assert main(["--stack", "torch=2.9", path]) == 2
    assert "--stack" in capsys.readouterr().err


@pytest.mark.parametrize(
    "engine,stack,fires",
    [("megatron", [], True), ("fsdp", [], False), ("megatron", ["--stack", "megatron-core=0.18.0"], False)],
)
def test_qwen35_bshd_only_on_the_megatron_engine_below_megatron_core_0_18(tmp_path, capsys, engine, stack, fires):
    """verl's FSDP engine has a varlen GDN path and Megatron-Core 0.18 a THD one: only the Megatron
    engine below 0.18 must run Qwen3.5 BSHD (a script without a DEVICE switch counts as GPU)."""
    path = script(
        tmp_path,
        f"python3 -m verl.trainer.main_ppo model_engine={engine} "
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "
        'actor_rollout_ref.model.path=/models/Qwen3.5-35B-A3B actor_rollout_ref.model.use_remove_padding=True "$@"\n',
    )
    found = [f for f in findings(capsys, *stack, path) if f["rule"] == "qwen35-gpu-bshd"]
    assert bool(found) == fires, found
