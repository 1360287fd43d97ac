"""A ref that sets its own override_transformer_config keys no longer gets the actor's."""

from __future__ import annotations

from .. import Rule

ACTOR = "actor_rollout_ref.actor.megatron.override_transformer_config."
REF = "actor_rollout_ref.ref.megatron.override_transformer_config."


class RefTransformerConfig(Rule):
    id = "ref-transformer-config"
    severity = "warning"
    concern = "key"  # one mistake with the other rules that say a key cannot be here
    stage = "policy"
    scope = "launch"
    summary = "the ref sets override_transformer_config keys of its own: the actor's no longer reach it"
    why = (
        "verl's ref.megatron.override_transformer_config defaults to the actor's dict through an interpolation; "
        "setting any key under the ref's replaces that dict, so every actor key the ref does not repeat (a "
        "recompute setting, an uneven pipeline split) silently stops applying to the ref."
    )
    ground_truth = (
        "verl 0.9.1 verl/trainer/config/ref/megatron_ref.yaml:23 (override_transformer_config: "
        "${oc.select:actor_rollout_ref.actor.megatron.override_transformer_config,{}})"
    )
    bad = (
        "+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform\n"
        "+actor_rollout_ref.ref.megatron.override_transformer_config.use_flash_attn=True"
    )
    good = (
        "+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform\n"
        "+actor_rollout_ref.ref.megatron.override_transformer_config.use_flash_attn=True\n"
        "+actor_rollout_ref.ref.megatron.override_transformer_config.recompute_method=uniform"
    )

    def check_launch(self, view, ctx):
        ref_keys = {s.key[len(REF) :].split(".")[0] for s in view.settings if s.key.startswith(REF)}
        if not ref_keys:
            return []
        first_ref = next(s for s in view.settings if s.key.startswith(REF))
        lost = []
        for s in view.settings:
            if s.key.startswith(ACTOR) and s.kind != "delete":
                name = s.key[len(ACTOR) :].split(".")[0]
                if name not in ref_keys and name not in lost:
                    lost.append(name)
        if not lost:
            return []
        message = (
            "the ref sets override_transformer_config keys of its own, which replaces the dict it would inherit: "
            f"the actor's {', '.join(lost)} {'does' if len(lost) == 1 else 'do'} not reach the ref "
            "(repeat what the ref needs)"
        )
        return [self.finding(first_ref.loc, message, first_ref.key)]
