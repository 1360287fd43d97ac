"""An evaluation budget was used up (paths, steps, time, loop iterations)."""

from __future__ import annotations

from ...shell import limits
from ...shell.notes import NoteKind
from .. import Rule


class Budget(Rule):
    id = "budget"
    severity = "info"
    stage = "bash"
    note = NoteKind.BUDGET  # the shell note it reports
    summary = "an evaluation budget was used up (paths, steps, work, time, loop iterations)"
    why = (
        "A note about the tool, not the script. Pathological input stays bounded:"
        f" a script gets {limits.STEPS:,} evaluation steps and {limits.WORK:,} units of work (characters"
        f" and elements its expansions build, copy or match; a {limits.SECONDS:g} s clock is only a backstop),"
        f" shared by all its profiles, at most {limits.STATES} paths and {limits.LOOP_ITERATIONS:,} loop"
        " iterations; what lies beyond is not checked. Simplify the script, or check fewer profiles (--profile)."
    )
    bad = "while true; do :; done"
    good = "for x in a b; do :; done"
