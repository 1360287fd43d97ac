"""What `render` shows of each launch besides its words, computed here and carried on the
launch result (LaunchResult.shown) for report/render.py to format: the layout and memory
summary (layout.py, over the launch's view), the config changes as YAML (real hydra.compose
of the launch against the same group selections), and which arguments pair with a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Shown:
    layout: list = field(default_factory=list)  # summary lines, without the comment sign
    config: str = ""  # the config changes as YAML, or a `# ...` note why there are none
    paired: frozenset = frozenset()  # indexes (after the module) of flags that take the next word


def annotate(results, caches, as_: str, opts) -> None:
    """Set `shown` on every launch of every profile of the results."""
    from .launches import _HYDRA_FLAGS_WITH_ARG

    for r in results:
        for prof in r.profiles:
            for la in prof.launches:
                fields = la.spec.argv[la.spec.entry + 1 :] if la.spec is not None else []
                paired = frozenset(i for i, f in enumerate(fields) if f.value in _HYDRA_FLAGS_WITH_ARG)
                la.shown = Shown(
                    layout=[line[len("#   ") :] for line in layout_summary(la, prof.profile, caches, opts)],
                    config=config_changes(caches, la) if as_ == "config" else "",
                    paired=paired,
                )


def _cache_of(caches, la):
    """The config cache of the launch's own folders (its target), or None when they are not here."""
    if caches is None or la.target is None or not la.target.config.checkable:
        return None
    return caches.get(la.target.verl, la.target.config.tree)


def config_changes(caches, la) -> str:
    """The composed config's values that differ from verl's defaults for the same config-group
    selections, as YAML (real hydra.compose). A value the script leaves to run time is shown
    as the script wrote it."""
    import yaml
    from omegaconf import OmegaConf

    from ..hydra_stage.check import is_group_selection
    from ..hydra_stage.tree import compose_raw

    if la.config_name is None:
        return f"# {la.module}: not a Hydra entry point of this verl"
    cache = _cache_of(caches, la)
    if cache is None:
        return f"# not composed: {la.target.config.missing if la.target else 'no verl config tree'}"
    partly = [o for o in la.spec.overrides if not o.known and o.key is not None and "=" in o.display]
    texts = [o.text for o in la.spec.overrides if o.known]
    groups = set(cache.groups or ())
    selections = [t for t, rec in zip(texts, cache.parse(texts), strict=True) if is_group_selection(rec, groups)]
    try:
        base = OmegaConf.to_container(compose_raw(cache.tree, la.config_name, selections), resolve=False)
        mine = OmegaConf.to_container(compose_raw(cache.tree, la.config_name, texts), resolve=False)
    except Exception as err:  # Hydra refuses the overrides: say so, as validate would
        return f"# does not compose: {str(err).splitlines()[0]}"
    base.pop("hydra", None)
    mine.pop("hydra", None)
    changed = _diff(base, mine)
    for o in partly:
        if "=" in o.display:
            _put(changed, o.key, o.display.split("=", 1)[1])
    if not changed:
        return "{}"
    return yaml.safe_dump(changed, sort_keys=False, default_flow_style=False).rstrip()


def _put(tree: dict, dotted: str, value: str) -> None:
    parts = dotted.split(".")
    node = tree
    for p in parts[:-1]:
        if not isinstance(node.get(p), dict):
            node[p] = {}
        node = node[p]
    node[parts[-1]] = value


def _diff(base, mine):
    if isinstance(base, dict) and isinstance(mine, dict):
        out = {}
        for key, value in mine.items():
            if key not in base:
                out[key] = value
            elif base[key] != value:
                out[key] = _diff(base[key], value)
        return out
    return mine


def layout_summary(la, profile, caches, opts) -> list[str]:
    """Comment lines: the devices the launch asks for (under --profile current, next to the
    devices this machine shows), its parallel layouts and the memory estimate
    (verl_preflight.target.layout); none when the launch does not compose."""
    from ..rules.view import build_view
    from ..target.layout import ModelConfigError, launch_layout, summary

    cache = _cache_of(caches, la)
    if cache is None or la.spec is None or not la.spec.trains:
        return []
    view = build_view(la.spec, la.config_name, profile, cache)
    if view is None:
        return []
    view.target = la.target
    try:
        lines = summary(launch_layout(view, opts))
    except ModelConfigError as err:
        lines = [f"model: {err}"]
    devices = getattr(opts, "devices", None)
    if getattr(opts, "current", False) and devices is not None:  # --profile current: this machine
        lines.insert(1, f"machine: {devices.against(view.int_value('trainer.n_gpus_per_node'))}")
    return [f"#   {line}" for line in lines]
