"""`--format github`: workflow commands that GitHub shows inline on a pull request."""

from __future__ import annotations

from .text import profile_text

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(results, findings) -> str:
    # what the run checked against, once for each verl, as a notice
    from .targets import in_brief, verls_lines

    lines = [f"::notice title=validate-scripts::{_data(said)}" for said in verls_lines(results)]
    scripts = {r.path: r for r in results}
    for f in findings:
        where = f"file={_prop(f.path)},line={max(1, f.line)},col={max(1, f.column)}"
        result = scripts.get(f.path)
        everyone = [p.profile for p in result.profiles] if result is not None else None
        message = f.message
        message += profile_text(f.profiles, everyone)
        for other in f.also:  # the same mistake, as other stacks or rules see it
            message += f"\nalso {other.severity}{profile_text(other.profiles, everyone)}: {other.message} [{other.rule}]"
        brief = in_brief(result, f.profiles) if result is not None else ""
        title = f"{f.rule} ({brief})" if brief else f.rule  # what it was checked against, in the title
        lines.append(f"::{COMMANDS.get(f.severity, 'warning')} {where},title={_prop(title)}::{_data(message)}")
    return "\n".join(lines) + ("\n" if lines else "")
