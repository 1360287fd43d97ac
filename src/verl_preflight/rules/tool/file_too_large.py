"""A script larger than --max-bytes is not read."""

from __future__ import annotations

from .. import Rule


class FileTooLarge(Rule):
    id = "file-too-large"
    severity = "error"
    stage = "tool"
    summary = "a script larger than --max-bytes is not read"
    why = "Keeps the linter bounded."
    ground_truth = "this tool's --max-bytes (default 5 MB): the script is not read, so nothing in it is checked"
    bad = "a 40 MB generated script"
    good = "a script of normal size"
