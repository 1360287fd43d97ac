"""`validate-scripts render`: what each profile hands verl, as a command, the overrides, or YAML."""

from __future__ import annotations

import shlex


def shell_word(field) -> str:
    """A field as one shell word: known text quoted, unknown pieces left as the script wrote
    them, for the shell that will run it (`"${HOME}"`, `"$(nproc)"`)."""
    parts = []
    for piece in field.pieces:
        if isinstance(piece, str):
            parts.append(shlex.quote(piece))
        elif piece.source is not None:
            parts.append(f'"{piece.source}"')
        else:
            parts.append(f"'<{piece.label}>'")
    return "".join(parts) or "''"


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
    partly = [o for o in la.spec.overrides if not o.known and o.checkable is not None]
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
            _put(changed, o.checkable.split("=", 1)[0].lstrip("+~"), o.display.split("=", 1)[1])
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


def command_lines(la) -> list[str]:
    """The launch as bash passes it, word for word (`--config-name X` stays two words, on one
    line): the command up to the module on the first line, then one argument a line."""
    from ..launches import _HYDRA_FLAGS_WITH_ARG

    spec = la.spec
    words = [shell_word(f) for f in spec.argv]
    head, rest = words[: spec.entry + 1], words[spec.entry + 1 :]
    fields = spec.argv[spec.entry + 1 :]
    grouped, i = [], 0
    while i < len(rest):
        if fields[i].value in _HYDRA_FLAGS_WITH_ARG and i + 1 < len(rest):
            grouped.append(f"{rest[i]} {rest[i + 1]}")
            i += 2
        else:
            grouped.append(rest[i])
            i += 1
    lines = [" ".join(head) + (" \\" if grouped else "")]
    for n, w in enumerate(grouped):
        lines.append(f"    {w}" + (" \\" if n + 1 < len(grouped) else ""))
    return lines


def render_json(results, caches, as_: str = "command") -> str:
    """render's data as JSON: per script and profile, each launch's argv (unknown pieces as
    {"unknown": "<source>"}, like --format json), its overrides, and with --as config the YAML."""
    import json

    from .json_report import pieces

    def word(f):
        p = pieces(f)
        return f.value if p is None else p

    doc = []
    for r in results:
        profiles = []
        for prof in r.profiles:
            launches = []
            for la in prof.launches:
                item = {
                    "line": la.line,
                    "module": la.module,
                    "config_name": la.config_name,
                    "argv": [word(f) for f in la.spec.argv],
                    "overrides": [word(o.field) for o in la.spec.overrides],
                    "target": la.target.as_json() if la.target is not None else None,
                }
                if as_ == "config":
                    item["config"] = config_changes(caches, la)
                launches.append(item)
            profiles.append({**prof.profile.as_json(), "status": prof.status, "launches": launches})
        doc.append({"path": r.path, "profiles": profiles})
    return json.dumps({"version": 1, "scripts": doc}, indent=2, ensure_ascii=False) + "\n"


def layout_summary(la, profile, caches, opts) -> list[str]:
    """Comment lines: the devices the launch asks for (under --profile current, next to the
    devices this machine shows), its parallel layouts and the memory estimate
    (verl_preflight.layout); none when the launch does not compose."""
    from ..layout import ModelConfigError, launch_layout, summary
    from ..rules.view import build_view

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


def render(results, caches, as_: str = "command", opts=None) -> str:
    out = []
    for r in results:
        for prof in r.profiles:
            out.append(f"# {r.path} [{prof.profile.describe()}]: {prof.status}")
            for la in prof.launches:
                if la.target is not None:
                    out.append(f"#   target: {la.target.describe()}")
                out.extend(layout_summary(la, prof.profile, caches, opts))
                if as_ == "overrides":
                    out.extend(shell_word(o.field) for o in la.spec.overrides)
                    continue
                if as_ == "config":
                    out.append(config_changes(caches, la))
                    continue
                out.extend(command_lines(la))
            out.append("")
    return "\n".join(out)
