"""Qwen3.5 on GPU with the Megatron engine runs BSHD: no remove-padding, no dynamic batch size."""

from __future__ import annotations

from ..data_policies import RequiredValue


class Qwen35GpuBshd(RequiredValue):
    id = "qwen35-gpu-bshd"
    severity = "error"
    summary = "Qwen3.5 on GPU runs BSHD: no remove-padding, no dynamic batch size"
    why = (
        "Megatron-Core 0.16 has no packed-sequence (THD) path for Gated Delta Net, so Qwen3.5 on the Megatron "
        "engine must run BSHD on GPU."
    )
    ground_truth = "verl PR #7335 (1dda039b9) examples/grpo_trainer/run_qwen3_5_35b_megatron.sh, gpu arm"
    bad = "actor_rollout_ref.model.path=Qwen/Qwen3.5-35B-A3B (DEVICE=gpu, remove padding left on)"
    good = (
        "actor_rollout_ref.model.use_remove_padding=False\nactor_rollout_ref.actor.megatron.use_remove_padding=False\n"
        "actor_rollout_ref.actor.use_dynamic_bsz=False"
    )
    spec = {
        "when": {"profile": {"DEVICE": "gpu"}, "key-matches": {"actor_rollout_ref.model.path": "(?i)qwen3[._-]?5"}},
        "keys": {
            "actor_rollout_ref.model.use_remove_padding": False,
            "actor_rollout_ref.actor.megatron.use_remove_padding": False,
            "actor_rollout_ref.actor.use_dynamic_bsz": False,
        },
        "message": "Qwen3.5's Gated Delta Net has no THD path in Megatron-LM: on GPU set {key}=False (it is {value})",
    }
