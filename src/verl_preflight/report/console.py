"""The lines the command writes besides its report: notices and errors on standard error,
the --fix and --diff summaries. Every such line is composed here."""

from __future__ import annotations

import sys

from .printable import escape
from .text import counted

PROGRAM = "validate-scripts"


def say(line: str) -> None:
    """A line of the program's own on standard error: `validate-scripts: ...`, one line whatever
    it quotes (a path with a newline and `::error::` in it cannot start a workflow command)."""
    print(escape(f"{PROGRAM}: {line}"), file=sys.stderr)


def internal_error(err: Exception) -> None:
    """The last line of defence: one line, never a traceback (the command exits 2)."""
    say(f"internal error: {type(err).__name__}: {err}")


def plain(line: str) -> None:
    """A line on standard error as it is (a finding's note, a summary), its control characters
    escaped: one line."""
    print(escape(line), file=sys.stderr)


def probed(device: tuple, devices) -> list[str]:
    return [f"--profile current: DEVICE={device[0]} ({device[1]})", f"--profile current: {devices.describe()}"]


def entry_origin(origin: str) -> str | None:
    """Where the entry points came from, when the tree has no verl sources beside it."""
    if origin.startswith("verl sources at"):
        return None
    return f"verl entry points (module -> root config) from {origin}"


def dependent(script: str, helpers: list[str]) -> str:
    """--dependents: a script checked because it reads a file given."""
    return f"{script}: checked too: it reads {', '.join(helpers)}"


def unread_profile_keys(results, pinned) -> list[str]:
    """Warnings for --profile keys that no checked script ever reads."""
    if not pinned or not results:
        return []
    out = []
    for key in dict.fromkeys(k for env in pinned for k in env):
        if not any(key in r.reads for r in results):
            where = results[0].path if len(results) == 1 else f"any of the {len(results)} scripts"
            out.append(f"warning: --profile {key}=...: {key} is never read by {where}; it changes nothing")
    return out


def refusals(plan) -> list[str]:
    """A note for each fixable finding whose fix is not applied, and why (refused, or unsafe)."""
    return [f"{f.path}:{f.line}:{f.column}: note: not fixed [{f.rule}]: {why}" for f, why in plan.refused] + [
        f"{f.path}:{f.line}:{f.column}: note: not fixed [{f.rule}]: unsafe: {why} (--unsafe-fixes applies it)"
        for f, why in plan.unsafe
    ]


def fixed(findings: int, files: int) -> str:
    return f"fixed {counted(findings, 'finding')} in {counted(files, 'file')}"


def would_fix(findings: int, files: int) -> str:
    return f"would fix {counted(findings, 'finding')} in {counted(files, 'file')}"
