"""The text the language server (lsp.py) shows in an editor: a diagnostic's message, a quick
fix's title, an override's hover. Formatting only: what they say is computed by the pipeline."""

from __future__ import annotations

from .text import profile_text


def diagnostic_message(f, all_profiles=None) -> str:
    """The finding's message and the profiles it holds in (the rule is the diagnostic's code)."""
    return f"{f.message}{profile_text(f.profiles, all_profiles)}"


def not_checked(why: str) -> str:
    """The one diagnostic of a script the server could not check."""
    return f"validate-scripts could not check this script: {why}"


def fix_title(rule: str, old: str, new: str, unsafe: str | None = None) -> str:
    """A quick fix, by the exact text it changes; an unsafe one (fix.why_unsafe) says why."""
    if not old:
        title = f"{rule}: insert `{new}`"
    elif not new:
        title = f"{rule}: delete `{old}`"
    else:
        title = f"{rule}: replace `{old}` with `{new}`"
    return f"{title} (unsafe: {unsafe})" if unsafe else title


def hover(key: str, rows, against=()) -> str:
    """Markdown: what each profile hands verl for `key`. `rows`: (profile label, value or None
    (the word does not reach this profile's launch), the line of the word that sets it when
    another word than the one under the cursor does, the launch: (module, line)); `against`:
    what the check was checked against (targets.verls_lines), said last."""
    launches = list(dict.fromkeys(launch for *_, launch in rows))
    where = "; ".join(f"{module} at line {line}" for module, line in launches)
    out = [f"`{key}`: what verl gets ({where})", ""]
    for label, value, other, _ in rows:
        if value is None:
            out.append(f"- {label} → not passed here")
        else:
            later = f" (set again at line {other})" if other else ""
            out.append(f"- {label} → `{value}`{later}")
    if against:
        out += ["", "; ".join(against).capitalize()]
    return "\n".join(out)


def hover_summary(key: str, rows) -> str:
    """The same in one line: `key: DEVICE=gpu → 4; DEVICE=npu → 2` (the server's log)."""
    return f"{key}: " + "; ".join(
        f"{label} → {value if value is not None else 'not passed'}" for label, value, *_ in rows
    )


def related(key) -> str:
    """A related place of a mistake of several settings."""
    return f"also involved: {key}" if key else "also involved"
