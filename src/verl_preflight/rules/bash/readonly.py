"""Assignment to a readonly variable."""

from __future__ import annotations

from ...shell.notes import NoteKind
from .. import Rule


class Readonly(Rule):
    id = "readonly"
    severity = "warning"
    stage = "bash"
    note = NoteKind.READONLY  # the shell note it reports
    summary = "assignment to a readonly variable"
    why = "bash refuses it."
    bad = "readonly TP=2\nTP=4"
    good = "TP=${TP:-2}"
