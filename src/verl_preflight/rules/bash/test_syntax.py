"""A malformed test expression."""

from __future__ import annotations

from ...shell.notes import NoteKind
from .. import Rule


class TestSyntax(Rule):
    id = "test-syntax"
    severity = "warning"
    stage = "bash"
    note = NoteKind.TEST_SYNTAX  # the shell note it reports
    summary = "a malformed test expression"
    why = "bash's test builtin prints an error and returns 2."
    bad = 'TP=two\n[ "$TP" -gt 1 ]'
    good = 'TP=2\n[ "$TP" -gt 1 ]'
