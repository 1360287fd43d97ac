"""An arithmetic error (division by zero, bad operand)."""

from __future__ import annotations

from ...shell.notes import NoteKind
from .. import Rule


class Arithmetic(Rule):
    id = "arithmetic"
    severity = "warning"
    stage = "bash"
    note = NoteKind.ARITHMETIC  # the shell note it reports
    summary = "an arithmetic error (division by zero, bad operand)"
    why = (
        "bash (5.2, not in POSIX mode) prints the error, drops the rest of the top-level command it is in (the "
        "assignment is not made, so the variable keeps its old value or stays empty; a whole `if` or loop around "
        "it is dropped) and goes on with the next command, $? 1. A value built from it reaches verl empty."
    )
    ground_truth = (
        "bash 5.2.15 expr.c evalerror -> top_level jump: measured here, `X=$((10/SP)); echo x` prints the error and "
        "neither sets X nor runs echo; the next line runs (tests/test_bash_differential.py runs real bash)"
    )
    bad = "DP=$((WORLD / TP))  # TP=0"
    good = "DP=$((WORLD / TP))  # TP=2"
