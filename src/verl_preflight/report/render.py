"""`validate-scripts render`: what each profile hands verl, as a command, the overrides, or YAML.

Formatting only: what is shown besides the launch (its layout, its config changes, which of its
arguments pair with a value) was computed by the pipeline (rendering.py) and sits on the launch."""

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


def command_lines(la) -> list[str]:
    """The launch as bash passes it, word for word (`--config-name X` stays two words, on one
    line): the command up to the module on the first line, then one argument a line."""
    spec = la.spec
    words = [shell_word(f) for f in spec.argv]
    head, rest = words[: spec.entry + 1], words[spec.entry + 1 :]
    fields = spec.argv[spec.entry + 1 :]
    grouped, i = [], 0
    while i < len(rest):
        if i in la.shown.paired and i + 1 < len(rest):
            grouped.append(f"{rest[i]} {rest[i + 1]}")
            i += 2
        else:
            grouped.append(rest[i])
            i += 1
    lines = [" ".join(head) + (" \\" if grouped else "")]
    for n, w in enumerate(grouped):
        lines.append(f"    {w}" + (" \\" if n + 1 < len(grouped) else ""))
    return lines


def render_json(results, as_: str = "command") -> str:
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
                    item["config"] = la.shown.config
                launches.append(item)
            profiles.append({**prof.profile.as_json(), "status": prof.status, "launches": launches})
        doc.append({"path": r.path, "profiles": profiles})
    return json.dumps({"version": 1, "scripts": doc}, indent=2, ensure_ascii=False) + "\n"


def render(results, as_: str = "command") -> str:
    out = []
    for r in results:
        for prof in r.profiles:
            out.append(f"# {r.path} [{prof.profile.describe()}]: {prof.status}")
            for la in prof.launches:
                if la.target is not None:
                    out.append(f"#   target: {la.target.describe()}")
                out.extend(f"#   {line}" for line in la.shown.layout)
                if as_ == "overrides":
                    out.extend(shell_word(o.field) for o in la.spec.overrides)
                    continue
                if as_ == "config":
                    out.append(la.shown.config)
                    continue
                out.extend(command_lines(la))
            out.append("")
    return "\n".join(out)
