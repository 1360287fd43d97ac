"""The config checks verl itself runs at start, read from the launch's verl and evaluated on the launch.

verl checks the composed config before any worker starts: `validate_config`
(verl >= 0.6, verl/utils/config.py, called by main_ppo), with the actor's and the
critic's dataclasses it builds (their `__post_init__` and `validate`), and before
that `RayPPOTrainer._validate_config` (trainer/ppo/ray_trainer.py, called by the
trainer's constructor). This rule reads those functions from the verl the launch
runs (installed, fetched with --verl, or the package beside the script) and
evaluates them on the launch's effective config without running anything
(verl_preflight.sources.verl_checks): each check that fails, at the override that
decides it, with verl's own message.

Whether a reference policy or a critic is checked is verl's decision too: verl 0.9
asks `need_reference_policy(config)`; verl 0.6-0.7 ask it of the role mapping the
task runner's `add_*_worker` methods build (trainer/main_ppo.py), and verl 0.4-0.5's
trainer reads `Role.RefPolicy in role_worker_mapping`, built in the task runner's
`run`. The functions of the entry module that write `role_worker_mapping` are
evaluated over the launch's config to tell which roles it holds.
"""

from __future__ import annotations

import re

from .. import Rule
from ..evaluation import launch_evaluation


class VerlCheck(Rule):
    id = "verl-check"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = "a config check verl runs at start fails (read from that verl's code and evaluated)"
    why = (
        "verl validates the config before the workers start: batch sizes against the number of devices, "
        "micro batch settings, the Megatron layout against the world, and the actor's and critic's dataclass "
        "checks. The checks differ between releases (they moved from RayPPOTrainer._validate_config to "
        "utils/config.py validate_config and the config dataclasses), so the validator evaluates the very "
        "functions of the launch's verl on its config, without running them. A value known only at run time, "
        "or code outside what the evaluator follows, is never a failure."
    )
    ground_truth = (
        "verl 0.9.1 verl/utils/config.py:88-217 validate_config (called by trainer/main_ppo.py:177), "
        "workers/config/actor.py:195-243 ActorConfig.__post_init__ and validate; verl v0.4.1 "
        "verl/trainer/ppo/ray_trainer.py RayPPOTrainer._validate_config (called by its __init__, "
        "use_reference_policy = Role.RefPolicy in role_worker_mapping at ray_trainer.py:331, the mapping built "
        "by trainer/main_ppo.py:155-157); verl v0.7.0 trainer/main_ppo.py:242-253 add_ref_policy_worker and "
        "trainer/ppo/utils.py:72-76 need_reference_policy(role_worker_mapping)"
    )
    bad = "data.train_batch_size=16 actor_rollout_ref.actor.ppo_mini_batch_size=128"
    good = "data.train_batch_size=128 actor_rollout_ref.actor.ppo_mini_batch_size=64"

    def check_launch(self, view, ctx):
        if not view.composes:
            return []  # Hydra refuses the launch first: verl's checks never run
        evaluation = launch_evaluation(view)
        if evaluation is None:
            return []
        version = view.source.verl_version if view.source is not None else None
        out = []
        for failure in evaluation.failures:
            if failure.value_set:
                continue  # a value outside verl's set: config-value reports it
            if _mistyped(view, failure):
                continue  # Python's TypeError on a string the script gave for a number: config-type's
            key = _deciding_key(view, failure)
            because = _because(view, failure)
            message = _message(view, failure, version, because)
            finding = self.finding(view.where(key) if key else view.loc, message, key)
            # a relation of settings: the others set here too (a null's TypeError is the null's alone)
            others = [k for k in dict.fromkeys(failure.own) if k != key and view.setting(k) is not None]
            others = [] if failure.nulls and failure.kind == "TypeError" else [k for k in others if _tail(k) not in (failure.message or "")][:3]
            out.append(finding.with_related((view.where(k), k) for k in others))
        return out


def _mistyped(view, failure) -> bool:
    """A TypeError on a string the script wrote where verl computes with a number or compares one
    (`lora_rank=eight`): the value's type is the mistake, which config-type reports."""
    if failure.kind != "TypeError" or failure.nulls:
        return False
    for key in failure.own:
        s = view.setting(key)
        if s is not None and isinstance(s.value, str) and "${" not in s.value:
            return True
    return False


def _because(view, failure) -> str:
    """For a check of a role the script may not mean to have: what makes verl use it (a critic,
    with the default advantage estimator gae)."""
    if failure.role is None:
        return ""
    role, keys = failure.role
    shown = [(k, view.shown(k)) for k in keys]
    values = ", ".join(f"{_tail(k)}={v}" for k, v in shown if v not in (None, "None", "False", "0"))  # what turns it on
    return f"; verl uses a {role} ({values})" if values else ""


def _message(view, failure, version: str | None, because: str) -> str:
    """verl's own message where it is known, else the failing statement with the values it read;
    then what is null, and where in verl it fails."""
    said = failure.message or f"`{failure.source}` is false"
    if because:
        said = said.rstrip(".")
    if not failure.message:
        values = [f"{k}={view.shown(k)}" for k in failure.own if view.shown(k) is not None][:4]
        if values:
            said += f" ({', '.join(values)})"
    if failure.kind == "TypeError" and failure.nulls:
        said += f": {', '.join(failure.nulls)} {'is' if len(failure.nulls) == 1 else 'are'} null"
    release = f"verl {version}" if version else "verl"
    return f"{said}{because} ({release} stops at start: {failure.kind} at verl/{failure.path}:{failure.line})"


def _tail(key: str) -> str:
    """`actor.ppo_micro_batch_size_per_gpu`: how verl's messages name a key (its section and name)."""
    return ".".join(key.split(".")[-2:])


_REMOVE = re.compile(r"[Pp]lease remove '([\w.]+)'")


def _deciding_key(view, failure) -> str | None:
    """The override to change: of the keys the failing check read, the one the script set last;
    else the override that made verl run the check; else (verl's defaults fail) the first key
    read, reported at the launch."""
    order = {s.key: i for i, s in enumerate(view.settings)}
    if failure.nulls and failure.kind == "TypeError":  # Python's TypeError on a null: set the null key
        return next((k for k in failure.nulls if k in order), failure.nulls[0])
    named = _REMOVE.search(failure.message or "")
    if named:  # verl names the key to remove ("Please remove 'actor.ppo_micro_batch_size'")
        for key in failure.own:
            if key in order and (key == named.group(1) or key.endswith("." + named.group(1))):
                return key
    set_here = [k for k in dict.fromkeys(failure.own) if k in order]
    if set_here:
        return max(set_here, key=order.__getitem__)
    # the failing keys are verl's defaults: the override that turned the check on is the place
    # (multi_turn.enable=True and no tool config), unless only verl's defaults are involved
    context = [k for k in dict.fromkeys(failure.reads) if k not in failure.own and k in order]
    if context and failure.role is None:
        return max(context, key=order.__getitem__)
    return failure.own[0] if failure.own else None  # the launch is the place
