"""An evaluation budget was used up (paths, steps, time, loop iterations)."""

from __future__ import annotations

from ...shell.notes import NoteKind
from .. import Rule


class Budget(Rule):
    id = "budget"
    severity = "info"
    stage = "bash"
    note = NoteKind.BUDGET  # the shell note it reports
    summary = "an evaluation budget was used up (paths, steps, time, loop iterations)"
    why = (
        "A note about the tool, not the script. Pathological input stays bounded:"
        " a script gets 200,000 evaluation steps (a 60 s clock is only a backstop),"
        " shared by all its profiles, at most 64 paths and 10,000 loop iterations; what lies"
        " beyond is not checked. Simplify the script, or check fewer profiles (--profile)."
    )
    bad = "while true; do :; done"
    good = "for x in a b; do :; done"
