"""An enumerated config value verl's dataclass refuses in `__post_init__`."""

from __future__ import annotations

import difflib

from ...sources.verl_checks import launch_evaluation
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
        evaluation = launch_evaluation(view) if view.composes else None
        out = [self._evaluated(view, f) for f in (evaluation.failures if evaluation else []) if f.value_set]
        built = evaluation.built if evaluation is not None else set()
        registry = None
        for s in view.settings:
            if s.kind == "delete" or not s.known or not isinstance(s.value, str):
                continue
            target, rel = owner_of(view, s.key)
            if target is None or not rel:
                continue
            if ".".join(s.key.split(".")[: -len(rel)]) in built and len(rel) == 1:
                continue  # the dataclass's own checks were evaluated on this launch (above)
            if registry is None:
                registry = dataclass_registry(view)
                if registry is None:
                    return out
            cls, name, status = field_owner(registry, target, rel)
            if status != "field":
                continue
            allowed = registry.enum_values(cls, name)
            if not allowed or s.value in allowed:
                continue
            out.append(self.finding(s.loc, _refused(view, name, s.value, allowed, cls.rsplit(".", 1)[-1]), s.key))
        return out

    def _evaluated(self, view, failure):
        """A value check of verl's that fails on this launch (sources.verl_checks evaluates it)."""
        key = failure.own[0]
        value = view.shown(key)
        where = f"{failure.kind} at verl/{failure.path}:{failure.line}"
        message = _refused(view, key.rsplit(".", 1)[-1], value, failure.allowed, None, where)
        return self.finding(view.where(key), message, key)


def _refused(view, name: str, value, allowed, owner: str | None, where: str | None = None) -> str:
    shown = ", ".join(sorted(str(v) for v in allowed))
    close = difflib.get_close_matches(str(value), [str(v) for v in allowed], n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    release = f"verl {view.source.verl_version}" if view.source is not None and view.source.verl_version else "verl"
    by = f" by {owner}" if owner else ""
    stops = f" ({release} stops at start: {where})" if where else f" ({release}): verl refuses it when it builds the config"
    return f"{name}={value} is not accepted{by}: one of {shown}{hint}{stops}"
