"""use_ascend_gdn=True needs use_triton_gdn=False in the same profile."""

from __future__ import annotations

from ..data_policies import Requires

_OTC = "actor_rollout_ref.actor.megatron.override_transformer_config."


class AscendGdnNeedsTritonOff(Requires):
    id = "ascend-gdn-needs-triton-off"
    severity = "error"
    summary = "use_ascend_gdn=True needs use_triton_gdn=False in the same profile"
    why = (
        "The two GDN paths of MindSpeed-Bridge exclude each other; verl PR #7335 sets both, together. Only "
        "where MindSpeed-Bridge runs (Ascend, the bridge on): elsewhere the flag is in the wrong place, which "
        "gdn-flag-gate says, and adding its partner there would be wrong advice."
    )
    ground_truth = "verl PR #7335 (1dda039b9): examples/grpo_trainer/run_qwen3_5_35b_megatron.sh sets both flags"
    bad = "+...override_transformer_config.use_ascend_gdn=True"
    good = "+...override_transformer_config.use_triton_gdn=False\n+...override_transformer_config.use_ascend_gdn=True"
    spec = {
        "if": {"key": _OTC + "use_ascend_gdn", "value": True},
        "then": {"key": _OTC + "use_triton_gdn", "value": False},
        "message": "use_ascend_gdn=True needs +" + _OTC + "use_triton_gdn=False in the same profile",
        "when": {"target": {"device": "npu", "mindspeed-bridge": True}},
    }
