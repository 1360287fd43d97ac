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
    why = "bash reports the error and the command fails."
    bad = "DP=$((WORLD / TP))  # TP=0"
    good = "DP=$((WORLD / TP))  # TP=2"
