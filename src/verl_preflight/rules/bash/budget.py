"""An evaluation budget was used up (paths, steps, loop iterations)."""

from __future__ import annotations

from .. import Rule


class Budget(Rule):
    id = "budget"
    severity = "warning"
    stage = "bash"
    summary = "an evaluation budget was used up (paths, steps, loop iterations)"
    why = "Pathological input stays bounded; raise the budget or simplify the script."
    bad = "while true; do :; done"
    good = "for x in a b; do :; done"
