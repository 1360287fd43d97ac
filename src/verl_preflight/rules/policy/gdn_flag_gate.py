"""The Ascend GDN flags belong only where the launch runs on Ascend with MindSpeed-Bridge."""

from __future__ import annotations

from ..data_policies import AllowedOnlyWhen, undecided

_OTC = "actor_rollout_ref.{role}.megatron.override_transformer_config.{flag}"


class GdnFlagGate(AllowedOnlyWhen):
    id = "gdn-flag-gate"
    severity = "error"
    concern = "key"  # one mistake with the other rules that say a key cannot be here
    summary = "the Ascend GDN flags only where the launch runs on Ascend with MindSpeed-Bridge"
    why = (
        "use_ascend_gdn / use_triton_gdn select MindSpeed-Bridge's Ascend kernels (verl PR #7335); they are "
        "read only by MindSpeed-Bridge. On GPU they are keys no TransformerConfig has: the launch fails on "
        "Megatron-Bridge >= 0.5 (an error). On Ascend without the bridge MindSpeed sets them on its global args "
        "and nothing reads them (a warning). The device and whether MindSpeed-Bridge runs are the launch's target "
        '(DEVICE and USE_MINDSPEED_BRIDGE in verl\'s scripts, docs/checks.md "The target"); where nothing decides them '
        "the finding is a warning."
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
        "when": {"target": {"device": "npu", "mindspeed-bridge": True}},
        "message": "{key} is read by MindSpeed-Bridge only: append it in the npu arm under "
        '`if [ "${USE_MINDSPEED_BRIDGE}" = "True" ]`',
    }

    def softened(self, view) -> str | None:
        """On GPU the flags fail the launch (an error); on Ascend without MindSpeed-Bridge MindSpeed
        stores them and nothing reads them (a warning); where the device or the bridge is not
        decided, a warning that says so."""
        why = undecided(view.target, "device") or undecided(view.target, "mindspeed-bridge")
        if why:
            return why
        if view.target.on_npu:
            return "without MindSpeed-Bridge MindSpeed sets it on its global args and nothing reads it"
        return None
