"""A check could not run on this machine (a source it reads is missing); said once per run."""

from __future__ import annotations

from .. import Rule


class CheckSkipped(Rule):
    id = "check-skipped"
    severity = "info"
    stage = "tool"
    run_wide = True  # one note for the run, whichever scripts and workers met it
    summary = "a check could not run here (what it reads is not installed); nothing was checked by it"
    why = "A skipped check is not a pass: the note says which check did not run and what to install so that it does."
    bad = "override_transformer_config keys, without megatron-core installed"
    good = "the same, with pip install --no-deps megatron-core==0.16.1"
    no_fixture = "depends on the packages of the machine; tests/test_transformer_config.py hides megatron-core"
