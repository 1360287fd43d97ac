"""A bug of the validator's own stopped the check of one script."""

from __future__ import annotations

from .. import Rule


class InternalError(Rule):
    id = "internal-error"
    severity = "error"
    stage = "tool"
    summary = "the validator failed on this script (a bug of ours); the script was not checked"
    why = (
        "One script's failure never stops the run: the others are checked, this one is reported so that a "
        "crash is never mistaken for a pass. Please report it with the script."
    )
    ground_truth = (
        "this tool: a bug of ours stopped the check of this script (reported so it is never taken for a pass)"
    )
    bad = "a script that makes the validator fail"
    good = "any script the validator can read"
    no_fixture = "no script should trigger it; tests/test_cli.py makes the pipeline fail on purpose"
