"""The checks verl runs on its config at start, read from the code of the launch's verl and evaluated.

Nothing is imported or executed: the functions are read with `ast` from the verl
tree (installed, fetched or vendored alike) and evaluated by sources/_pyeval.py
over the launch's effective config (`rules.view.LaunchView`), with verl's registry
as its sources (verl's functions, methods, `super()`, `omega_conf_to_dataclass`
with the dataclass's `__post_init__`) and as a linter does: every failure is
reported, not only the first (a `raise` ends the `if` block or the function it is
in, an assert is passed over, and the config keys a failure read are unknown from
then on: their mistake is reported once).

Which checks run depends on the version (`entry_checks`): verl >= 0.6's
`verl/utils/config.py validate_config(config, use_reference_policy, use_critic)`
where the entry point calls it (its arguments from verl's own
`need_reference_policy` / `need_critic` where the version has them), and before
that `RayPPOTrainer._validate_config(self)` (trainer/ppo/ray_trainer.py), which the
trainer's constructor calls.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from ._pyast import parse_file
from ._pyeval import UNKNOWN, Evaluator, Node, Obj

MAX_STEPS = 20_000  # statements per check: a counted budget, never the clock
MAX_DEPTH = 40  # nested calls


@dataclass
class Evaluation:
    """What verl's start-up checks make of one launch: the failures, in the order verl meets
    them, and the config sections built into dataclasses along the way (their values were
    checked by the dataclass's own `__post_init__`)."""

    failures: list = field(default_factory=list)
    built: set = field(default_factory=set)  # config paths: actor_rollout_ref.actor, critic
    checks: list = field(default_factory=list)  # "verl/utils/config.py validate_config", ...


def checker(registry, view) -> Evaluator:
    """The evaluator of verl's start-up checks: verl's sources, every failure, their budget."""
    return Evaluator(view, sources=registry, go_on=True, max_steps=MAX_STEPS, max_depth=MAX_DEPTH)


# ---- which checks a version runs ---------------------------------------------------------


@dataclass
class EntryCheck:
    """One check function a launch of this entry point runs, and how it is called."""

    module: str  # verl.utils.config
    node: ast.FunctionDef
    style: str  # "validate_config" (config, use_reference_policy, use_critic) or "trainer" (self)
    owner: ast.ClassDef | None = None

    @property
    def name(self) -> str:
        path = "/".join(["verl", *self.module.split(".")[1:]]) + ".py"
        if self.owner is not None:
            return f"{path} {self.owner.name}._validate_config"
        return f"{path} {self.node.name}"


def entry_checks(verl_root: str, entry_module_file: str | None) -> list[EntryCheck]:
    """The config checks the entry point's driver runs at this version (module docstring)."""
    out = []
    text = _read(entry_module_file) if entry_module_file else ""
    if "validate_config(" in text:
        tree = parse_file(os.path.join(verl_root, "utils", "config.py"))
        fn = _function(tree, "validate_config")
        if fn is not None:
            out.append(EntryCheck("verl.utils.config", fn, "validate_config"))
    elif "RayPPOTrainer(" in text:
        tree = parse_file(os.path.join(verl_root, "trainer", "ppo", "ray_trainer.py"))
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RayPPOTrainer"), None) if tree else None
        init = _function(cls, "__init__") if cls else None
        fn = _function(cls, "_validate_config") if cls else None
        if fn is not None and init is not None and "_validate_config" in ast.unparse(init):
            # the constructor, for what it decides before it calls the check (use_critic)
            out.append(EntryCheck("verl.trainer.ppo.ray_trainer", init, "trainer", cls))
    return out


def _function(tree, name: str):
    if tree is None:
        return None
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def evaluate(registry, view, checks: list[EntryCheck]) -> Evaluation:
    """Each check over the launch's config: every failure met, and the sections built."""
    out = Evaluation(checks=[c.name for c in checks])
    for check in checks:
        ev = checker(registry, view)
        config = Node(ev, "")
        (ref_policy, ref_keys), (critic, critic_keys) = _roles(registry, view)
        roles = (("reference policy", ref_keys), ("critic", critic_keys))
        if check.style == "validate_config":
            ev.call_def(check.module, check.node, [config, ref_policy, critic], taints=[(), ref_keys, critic_keys])
        else:  # RayPPOTrainer(config, ...): its constructor up to the methods it calls, but the check
            trainer = Obj(cls=check.owner, module=check.module, follow=frozenset({"_validate_config"}), complete=False)
            ev.call_def(check.module, check.node, [config], bound=trainer, owner=(check.owner, check.module))
            roles = (("critic", ("algorithm.adv_estimator",)),)  # the constructor decides use_critic from it
        for failure in ev.failures:
            context = [k for k in failure.reads if k not in failure.own]
            failure.role = next(((r, keys) for r, keys in roles if keys and set(keys) & set(context)), None)
        out.failures.extend(ev.failures)
        out.built |= ev.built
    return out


def _roles(registry, view):
    """((use_reference_policy, keys it read), (use_critic, keys)) as the launch's verl decides
    them, where it has `need_reference_policy` / `need_critic` (trainer/ppo/utils.py); unknown
    otherwise."""
    out = []
    for name in ("need_reference_policy", "need_critic"):
        found = registry._lookup("verl.trainer.ppo.utils", name, set())
        if found is None or not isinstance(found[2], ast.FunctionDef):
            out.append((UNKNOWN, ()))
            continue
        ev = checker(registry, view)
        value = ev.call_def(found[0], found[2], [Node(ev, "")])
        known = isinstance(value, bool) and not ev.failures
        out.append((value if known else UNKNOWN, tuple(dict.fromkeys(ev.reads))))
    return tuple(out)
