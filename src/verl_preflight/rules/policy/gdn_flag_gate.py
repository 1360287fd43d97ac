"""The Ascend GDN flags belong only where DEVICE=npu and USE_MINDSPEED_BRIDGE=True."""

from __future__ import annotations

from ..data_policies import AllowedOnlyWhen

_OTC = "actor_rollout_ref.{role}.megatron.override_transformer_config.{flag}"


class GdnFlagGate(AllowedOnlyWhen):
    id = "gdn-flag-gate"
    severity = "error"
    summary = "the Ascend GDN flags only where DEVICE=npu and USE_MINDSPEED_BRIDGE=True"
    why = (
        "use_ascend_gdn / use_triton_gdn select MindSpeed-Bridge's Ascend kernels (verl PR #7335); they are "
        "read only by MindSpeed-Bridge. Without it (GPU, or Ascend without the bridge) they are keys no "
        "TransformerConfig has: the launch fails on Megatron-Bridge >= 0.5, or they are silently ignored. A "
        "script without the switch counts as USE_MINDSPEED_BRIDGE=False."
    )
    ground_truth = "verl PR #7335 (1dda039b9): examples/grpo_trainer/run_qwen3_5_35b_megatron.sh, the npu arm's gate"
    bad = (
        'case "${DEVICE}" in\n  npu)\n'
        "    ACTOR+=(+actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True)"
    )
    good = (
        'case "${DEVICE}" in\n  npu)\n    if [ "${USE_MINDSPEED_BRIDGE}" = "True" ]; then\n'
        "      ACTOR+=(+actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True)\n    fi"
    )
    spec = {
        "keys": [
            _OTC.format(role=role, flag=flag)
            for role in ("actor", "ref")
            for flag in ("use_ascend_gdn", "use_triton_gdn")
        ],
        "when": {"profile": {"DEVICE": "npu", "USE_MINDSPEED_BRIDGE": "True"}},
        "message": "{key} is an Ascend MindSpeed-Bridge flag: append it only in the npu arm under "
        '`if [ "${USE_MINDSPEED_BRIDGE}" = "True" ]`',
    }
