"""`--format github`: workflow commands that GitHub shows inline on a pull request."""

from __future__ import annotations

from .text import profile_text

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(results, findings) -> str:
    from .targets import verls_lines

    # what the run checked against, once for each verl, as a notice
    lines = [f"::notice title=validate-scripts::{_data(said)}" for said in verls_lines(results)]
    for f in findings:
        where = f"file={_prop(f.path)},line={max(1, f.line)},col={max(1, f.column)}"
        message = f.message
        message += profile_text(f.profiles)
        for other in f.also:  # the same mistake, as other stacks or rules see it
            message += f"\nalso {other.severity}{profile_text(other.profiles)}: {other.message} [{other.rule}]"
        lines.append(f"::{COMMANDS.get(f.severity, 'warning')} {where},title={_prop(f.rule)}::{_data(message)}")
    return "\n".join(lines) + ("\n" if lines else "")
