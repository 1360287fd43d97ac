"""An evaluation budget was used up (paths, steps, time, loop iterations), or a loop never ends."""

from __future__ import annotations

from ...shell import limits
from ...shell.notes import NoteKind
from .. import Rule


class Budget(Rule):
    id = "budget"
    severity = "info"
    stage = "bash"
    note = NoteKind.BUDGET  # the shell note it reports
    summary = "an evaluation budget was used up (paths, steps, work, time, loop iterations), or a loop never ends"
    why = (
        "A note about the tool's bounds, not the script, except a loop that never ends. Pathological input"
        " stays bounded:"
        f" a script gets {limits.STEPS:,} evaluation steps and {limits.WORK:,} units of work (characters"
        f" and elements its expansions build, copy or match; a {limits.SECONDS:g} s clock is only a backstop),"
        f" shared by all its profiles, at most {limits.STATES} paths and {limits.LOOP_ITERATIONS:,} loop"
        " iterations; what lies beyond is not checked. Simplify the script, or check fewer profiles (--profile)."
        " Paths that go on alike (the same variables, functions, launches and notes) are followed as one,"
        " and a pass of a loop that comes back to the loop's head as it was is not followed again; a loop"
        " with no other way out is said to never end (bash would spin there: a wait loop without its `break`)."
    )
    bad = "while true; do :; done"
    good = "for x in a b; do :; done"
