"""Bash cannot parse this part of the script."""

from __future__ import annotations

from .. import Rule


class BashSyntax(Rule):
    id = "bash-syntax"
    severity = "error"
    stage = "bash"
    summary = "bash cannot parse this part of the script"
    why = "tree-sitter-bash reports an error node; bash would refuse the script or run something else."
    bad = 'if [ "$DEVICE" = npu ]; then\n  TP=2'
    good = 'if [ "$DEVICE" = npu ]; then\n  TP=2\nfi'
