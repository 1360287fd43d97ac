"""Qwen3.5 on the Megatron engine off Ascend runs BSHD below Megatron-Core 0.18."""

from __future__ import annotations

from ...target.launch_target import version_tuple
from ..data_policies import RequiredValue


class Qwen35GpuBshd(RequiredValue):
    id = "qwen35-gpu-bshd"
    severity = "error"
    summary = "Qwen3.5 on the Megatron engine off Ascend runs BSHD (no remove-padding, no dynamic batch size)"
    why = (
        "Qwen3.5 mixes Gated Delta Net into its layers. Megatron-Core 0.16 has no packed-sequence (THD) path "
        "for GDN, so on the Megatron engine outside Ascend the launch must run BSHD; Megatron-Core 0.18 adds "
        "a THD path (verl PR #7336), and verl's FSDP engine patches GDN with a varlen path, so neither needs it. "
        'The device and the megatron-core release are the launch\'s target (docs/checks.md, "The target"): where the '
        "device is not known, or nothing names the release, the finding is a warning."
    )
    ground_truth = (
        "verl PR #7335 (1dda039b9) examples/grpo_trainer/run_qwen3_5_35b_megatron.sh, gpu arm; "
        "Megatron-Core 0.18 THD path for GDN with verl PR #7336"
    )
    bad = "actor_rollout_ref.model.path=Qwen/Qwen3.5-35B-A3B (DEVICE=gpu, remove padding left on)"
    good = (
        "actor_rollout_ref.model.use_remove_padding=False\nactor_rollout_ref.actor.megatron.use_remove_padding=False\n"
        "actor_rollout_ref.actor.use_dynamic_bsz=False"
    )
    spec = {
        "when": {"engine": "megatron", "key-matches": {"actor_rollout_ref.model.path": "(?i)qwen3[._-]?5"}},
        "keys": {
            "actor_rollout_ref.model.use_remove_padding": False,
            "actor_rollout_ref.actor.megatron.use_remove_padding": False,
            "actor_rollout_ref.actor.use_dynamic_bsz": False,
        },
        "message": "Qwen3.5's Gated Delta Net has no THD path in Megatron-Core below 0.18: set {key}=False "
        "(it is {value})",
    }

    def applies(self, view) -> bool:
        target = view.target
        if target is None or target.on_npu:
            return False
        if version_tuple(target.stack.version("megatron-core")) >= (0, 18):
            return False
        return super().applies(view)

    def softened(self, view) -> str | None:
        target = view.target
        if not target.device.known:
            return "on GPU; the device is not known: trainer.device or --device names it"
        if target.stack.assumed("megatron-core"):
            return "nothing names the launch's megatron-core release: --stack megatron-core=..., or a pin"
        return None

    def message(self, key: str, value, view=None) -> str:
        return f"{super().message(key, value, view)} on {view.target.stack.names('megatron-core')}"
