"""Bash cannot parse this part of the script."""

from __future__ import annotations

from ...shell.notes import NoteKind
from .. import Rule


class BashSyntax(Rule):
    id = "bash-syntax"
    severity = "error"
    stage = "bash"
    note = NoteKind.SYNTAX  # the shell note it reports
    summary = "bash cannot parse this part of the script"
    why = "tree-sitter-bash reports an error node; bash would refuse the script or run something else."
    ground_truth = (
        "bash -n (GNU bash 5): a script bash cannot parse does not run past the error; "
        "tree-sitter-bash 0.25 marks the same places"
    )
    bad = 'if [ "$DEVICE" = npu ]; then\n  TP=2'
    good = 'if [ "$DEVICE" = npu ]; then\n  TP=2\nfi'
