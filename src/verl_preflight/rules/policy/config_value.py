"""An enumerated config value verl's dataclass refuses in `__post_init__`."""

from __future__ import annotations

from .. import Rule
from .config_field import dataclass_registry, field_owner, owner_of


class ConfigValue(Rule):
    id = "config-value"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = "a value outside the set the config's dataclass accepts (checked in its __post_init__)"
    why = (
        "Hydra stores any string, but verl's config dataclasses check some fields against a fixed set when "
        "they are built (ActorConfig's loss_agg_mode, for one): a value outside it raises ValueError or "
        "AssertionError when verl builds the config. The sets are read from the verl tree the launch is checked "
        "against, never copied."
    )
    ground_truth = "verl 0.9.1 verl/workers/config/actor.py:212-220 (ActorConfig.__post_init__, loss_agg_mode)"
    bad = "actor_rollout_ref.actor.loss_agg_mode=token_mean"
    good = "actor_rollout_ref.actor.loss_agg_mode=token-mean"

    def check_launch(self, view, ctx):
        registry = None
        out = []
        for s in view.settings:
            if s.kind == "delete" or not s.known or not isinstance(s.value, str):
                continue
            target, rel = owner_of(view, s.key)
            if target is None or not rel:
                continue
            if registry is None:
                registry = dataclass_registry(view)
                if registry is None:
                    return []
            cls, name, status = field_owner(registry, target, rel)
            if status != "field":
                continue
            allowed = registry.enum_values(cls, name)
            if not allowed or s.value in allowed:
                continue
            shown = ", ".join(sorted(str(v) for v in allowed))
            message = (
                f"{name}={s.value} is not accepted by {cls.rsplit('.', 1)[-1]} (verl "
                f"{view.source.verl_version or '?'}): one of {shown}; verl refuses it when it builds the config"
            )
            out.append(self.finding(s.loc, message, s.key))
        return out
