"""A config value verl refuses: outside the set a config dataclass's `__post_init__` accepts, a
value it refuses there (`if self.mode == "sync": raise`), or a name its registries do not hold.

Two sources, both read from the launch's verl tree with `ast`, never listed here:

- the config dataclasses verl builds (verl_preflight.sources.verl_classes): the
  values an unconditional `__post_init__` check accepts for a field, and those it
  raises on;
- the registries and dispatch chains verl looks config values up in
  (verl_preflight.sources.verl_registries): the advantage estimator, the policy
  loss, the reward manager, the rollout and its mode, and whatever else a site
  function of that version checks the same way.

A value outside a registry is an error, unless the launch can extend the registry
at run time: a module verl imports because the config names it
(`custom_reward_function.path`, `data.custom_cls.path`, `model.external_lib`, ...),
an environment variable verl's `__init__` imports modules or plugins from
(`VERL_USE_EXTERNAL_MODULES`), or an entry point that is not verl's own code; then
it is an info that says so. One finding per key, the earliest verl would hit.
"""

from __future__ import annotations

import difflib
import os

from ...hydra_stage.tree import in_verl
from ...sources.verl_registries import FIRST_STEP, PHASES, SITES, START, names_user_module, read_sources
from .. import Rule
from ..evaluation import launch_evaluation
from ..view import is_unknown
from .config_field import _package_root, dataclass_registry, field_owner, owner_of

_WHEN = {
    START: "when the job starts",
    FIRST_STEP: "only at the first training step",
}
_SHOWN = 8  # values listed in a message, at most


class ConfigValue(Rule):
    id = "config-value"
    severity = "error"
    stage = "policy"
    scope = "launch"
    reads_verls_workers = True
    summary = "a value verl refuses: outside its dataclass's checks or not in the registry verl looks it up in"
    why = (
        "Hydra stores any string, but verl checks some values. Its config dataclasses check fields against a "
        "fixed set when they are built (ActorConfig's loss_agg_mode) or refuse a value outright (RolloutConfig "
        "refuses mode=sync since it was removed). And verl turns names into code through registries: the "
        "advantage estimator, the policy loss, the reward manager and the rollout are looked up by name, and a "
        "name nobody registered raises ValueError or AssertionError, when the job starts or only at the first "
        "training step, after the cluster is up and the first rollout is done. Older verl dispatches with an "
        "if/elif chain whose last else raises (0.4.1 RayPPOTrainer.__init__ on the estimator). The sets, the "
        "registrations (decorators, register() calls, dict literals, Enum members) and the line that raises are "
        "read from the verl tree the launch is checked against, per version. A registry a launch can extend at "
        "run time (a user module named in the config, VERL_USE_EXTERNAL_MODULES, an entry point outside verl) "
        "gives an info, not an error. verl 0.9.1 also loads installed packages' `verl.plugins` entry points by "
        "default (VERL_USE_EXTERNAL_PLUGINS=auto); the error assumes no such plugin registers the name on the "
        "machine that runs the job."
    )
    ground_truth = (
        "verl 0.9.1 verl/workers/config/actor.py:212-220 (ActorConfig.__post_init__, loss_agg_mode); "
        "verl/workers/config/rollout.py:281-285 (RolloutConfig.__post_init__ refuses mode=sync); "
        "verl/trainer/ppo/core_algos.py:149 (get_adv_estimator_fn raises ValueError; called by "
        "trainer/ppo/ray_trainer.py:250 compute_advantage at each step) and :82 (get_policy_loss_fn; called by "
        "workers/utils/losses.py:103); experimental/reward_loop/reward_manager/registry.py:52 (called by "
        "trainer/ppo/reward.py:95); workers/rollout/base.py:106 (get_rollout_class asserts (name, mode) in "
        "_ROLLOUT_REGISTRY; workers/engine_workers.py:667) and workers/rollout/replica.py:326 "
        "(RolloutReplicaRegistry.get). verl v0.4.1 verl/trainer/ppo/ray_trainer.py:358 (RayPPOTrainer.__init__ "
        "raises NotImplementedError on an estimator it does not list), workers/fsdp_workers.py:492 and "
        "workers/megatron_workers.py:332 (_build_rollout on the rollout name), workers/reward_manager/"
        "registry.py:48"
    )
    bad = "algorithm.adv_estimator=grop"
    good = "algorithm.adv_estimator=grpo"

    def check_launch(self, view, ctx):
        evaluation = launch_evaluation(view) if view.composes else None
        out = [self._evaluated(view, f) for f in (evaluation.failures if evaluation else []) if f.value_set]
        reported = {f.key for f in out}
        out += [f for f in self._dataclass_values(view, evaluation) if f.key not in reported]
        reported |= {f.key for f in out}
        out += [f for f in self._registry_values(view) if f.key not in reported]
        return out

    # ---- verl's start-up checks, evaluated (sources.verl_checks) -------------------------

    def _evaluated(self, view, failure):
        """A value check of verl's start-up code that fails on this launch: the value is outside
        the constants verl's test compares it with."""
        key = failure.own[0]
        name, value = key.rsplit(".", 1)[-1], view.shown(key)
        shown = ", ".join(str(v) for v in sorted(failure.allowed, key=str)[:_SHOWN])
        close = difflib.get_close_matches(str(value), [str(v) for v in failure.allowed], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        version = view.source.verl_version if view.source is not None else None
        release = f"verl {version}" if version else "verl"
        message = (
            f"{name}={value} is not accepted: one of {shown}{hint} ({release} stops at start: "
            f"{failure.kind} at verl/{failure.path}:{failure.line})"
        )
        return self.finding(view.where(key), message, key)

    # ---- the config dataclasses' __post_init__ ----------------------------------------

    def _dataclass_values(self, view, evaluation):
        """The value checks of the dataclasses verl builds, read statically: for the sections the
        evaluation of verl's start-up checks did not build (a dataclass it built ran its own
        __post_init__ there)."""
        built = evaluation.built if evaluation is not None else set()
        registry = None
        out = []
        for s in view.settings:
            if s.kind == "delete" or not isinstance(s.value, str):
                continue
            target, rel = owner_of(view, s.key)
            if target is None or not rel:
                continue
            if len(rel) == 1 and ".".join(s.key.split(".")[:-1]) in built:
                continue
            if registry is None:
                registry = dataclass_registry(view)
                if registry is None:
                    return []
            cls, name, status = field_owner(registry, target, rel)
            if status != "field":
                continue
            version = view.verl_version
            short = cls.rsplit(".", 1)[-1]
            refused = registry.refused_values(cls, name).get(s.value)
            if refused is not None:
                where = refused.owner.rsplit(".", 1)[0].replace(".", "/") + ".py"
                message = (
                    f"verl {version} refuses {name}={s.value}: {short}.__post_init__ raises at {where}:"
                    f"{refused.line} when verl builds the config"
                )
                out.append(self.finding(s.loc, message, s.key))
                continue
            allowed = registry.enum_values(cls, name)
            if not allowed or s.value in allowed:
                continue
            shown = ", ".join(sorted(str(v) for v in allowed))
            message = (
                f"{name}={s.value} is not accepted by {short} (verl "
                f"{version}): one of {shown}; verl refuses it when it builds the config"
            )
            out.append(self.finding(s.loc, message, s.key))
        return out

    # ---- registries and dispatch chains --------------------------------------------------

    def _registry_values(self, view):
        if not any(s.kind != "delete" for s in view.settings):
            return []
        sources = read_sources(_package_root(view.source))
        if not sources.checks:
            return []
        decided: dict = {}
        by_site: dict = {}
        for check in sources.checks:
            for key in check.keys:
                if key not in decided:
                    decided[key] = _deciding(view, key) is not None
            if not any(decided[k] for k in check.keys):
                continue
            result = _evaluate(view, check)
            if result is not None:
                by_site.setdefault(check.site, []).append(result)
        if not by_site:
            return []
        failures = _drop_accepted_alternatives(view, sources.sites, by_site)
        chosen: dict = {}
        order = {site: i for i, site in enumerate(SITES)}  # the order verl runs them in, within a phase
        for result in sorted(failures, key=lambda r: (PHASES.index(r.check.site.phase), order[r.check.site])):
            chosen.setdefault(result.key, result)
        out = []
        signal = None
        for result in chosen.values():
            setting = _deciding(view, result.key)
            if setting is None:
                continue
            if signal is None:
                signal = _extension(view, sources) or ""
            here = signal or _own_code_spelling(view, result.value) or ""
            message = _message(view, result, here, setting)
            out.append(self.finding(setting.loc, message, setting.key, at_most="info" if here else None))
        return out


class _Result:
    """A check that raises on the launch's values: the key to blame, its value, what it takes."""

    def __init__(self, check, key, value, known):
        self.check = check
        self.key = key
        self.value = value
        self.known = known


def _plain(value):
    """A value the check can be decided on: a known string that is no interpolation."""
    return isinstance(value, str) and "${" not in value


def _evaluate(view, check):
    for lit in check.guards:
        value = view.value(lit.key)
        if is_unknown(value) or isinstance(value, str) and "${" in value:
            return None
        if not lit.holds(value):
            return None  # the check does not run
    values = tuple(view.value(k) for k in check.keys)
    if not all(_plain(v) for v in values):
        return None
    if not check.raises(values):
        return None
    if len(check.keys) == 1:
        return _Result(check, check.keys[0], values[0], check.values)
    # several keys looked up together ((name, mode)): blame the first that no entry has
    entries = [e for e in (check.values or ()) if isinstance(e, tuple) and len(e) == len(values)]
    for i, key in enumerate(check.keys):
        known = frozenset(e[i] for e in entries if all(e[j] == values[j] for j in range(i)))
        if values[i] not in known:
            return _Result(check, key, values[i], known)
    return None


def _drop_accepted_alternatives(view, sites, by_site) -> list:
    """The failures left once alternatives are weighed: of the sites of one group (one of them
    runs), a key fails only when every site that applies to the launch refuses its value."""
    out = []
    groups: dict = {}
    for site, results in by_site.items():
        if site.group is None:
            out.extend(results)
        else:
            groups.setdefault(site.group, {})[site] = results
    for group, failing in groups.items():
        applicable = [s for s in sites if s.group == group and _applies(view, s)]
        keys = {r.key for results in failing.values() for r in results}
        for key in keys:
            if all(any(r.key == key for r in failing.get(s, ())) for s in applicable):
                out.extend(r for results in failing.values() for r in results if r.key == key)
    return out


def _applies(view, site) -> bool:
    """Whether the site may run for this launch (its `when` holds, or is not known)."""
    for key, values in site.when:
        value = view.value(key)
        if _plain(value) and value not in values:
            return False
    return True


def _deciding(view, key: str, depth: int = 0):
    """The script's setting that gives the key its value: its override, or the override of the key an
    interpolation (`${a.b}`, `${oc.select:a.b,default}`) takes it from; None when the default stands."""
    setting = view.setting(key)
    if setting is not None:
        return setting
    node = view.raw(key)
    if isinstance(node, str) and depth < 8:
        from ..view import _PLAIN, _SELECT

        m = _SELECT.match(node) or _PLAIN.match(node)
        if m:
            return _deciding(view, m.group(1), depth + 1)
    return None


def _extension(view, sources) -> str | None:
    """What in this launch can add to verl's registries at run time, as text; None when nothing."""
    module = in_verl(view.spec.module or "")
    if module is None or not module.startswith("verl."):
        return f"the entry point {view.spec.module} (not verl's own code)"
    for ext in sources.extensions:
        value = view.exported(ext.env)
        if value is None:
            continue
        if is_unknown(value):
            return f"{ext.env} (set at run time)"
        text = value.strip().lower()
        if not text or text in ext.off or ext.default is not None and text == ext.default.strip().lower():
            continue
        return f"{ext.env}={value}"
    chains = sources.user_modules
    for s in view.settings:
        if s.kind == "delete" or not names_user_module(chains, s.key):
            continue
        if not is_unknown(s.value) and s.value in (None, "", "null"):
            continue
        return f"the module {s.key}={s.shown_value}"
    return None


def _own_code_spelling(view, value) -> str | None:
    """`the code of the entry's own folder (mix_src/mix_trainer.py:180, ...)` where a module of the
    entry's folder spells the value (sources.entry_folder.spelling: a fork's entry builds its own
    trainer, which handles values verl's does not); None where none does."""
    from ...hydra_stage.tree import module_dir
    from ...sources.entry_folder import spelling

    if not isinstance(value, str) or not value or view.source is None:
        return None
    folder = module_dir(view.source, view.spec.module or "")
    where = spelling(folder, value) if folder is not None and os.path.isdir(folder) else None
    return f"the code of the entry's own folder ({where}, which verl's check does not follow)" if where else None


def _message(view, result, signal: str, setting) -> str:
    check = result.check
    version = view.verl_version
    where = f"{check.raise_at[0]}:{check.raise_at[1]}"
    when = _WHEN.get(check.site.phase, "")
    known = sorted(str(v) for v in result.known or ())
    shown = ", ".join(known[:_SHOWN]) + (", ..." if len(known) > _SHOWN else "")
    folded = {k.lower(): k for k in known}
    close = [folded[str(result.value).lower()]] if str(result.value).lower() in folded else []
    close = close or difflib.get_close_matches(str(result.value), known, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    head = f"{setting.key}={result.value}"
    if setting.key != result.key:
        head += f" (verl reads it as {result.key})"
    if check.kind == "registry":
        what, listed = f"is not registered in verl {version}", f"{check.registry}: {shown}"
    elif check.values is not None:
        what, listed = f"is not one verl {version} takes there", f"it takes {shown}"
    else:
        what, listed = f"is refused by verl {version}", ""
    fails = f"{where} raises {check.error} {when}"
    tail = f" ({listed})" if listed and not hint else ""  # the hint is the fix; else what there is
    if signal:
        may = "may handle it" if signal.startswith("the code of the entry's") else "may register it at run time"
        return f"{head} {what}{hint}: {signal} {may}, else {fails}{tail}"
    return f"{head} {what}{hint}: {fails}{tail}"
