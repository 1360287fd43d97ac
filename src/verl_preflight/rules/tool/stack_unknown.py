"""The stack a launch targets has a version the tool has no data for; its keys are not checked."""

from __future__ import annotations

from .. import Rule


class StackUnknown(Rule):
    id = "stack-unknown"
    severity = "warning"
    stage = "tool"
    run_wide = True
    summary = "a stack version the tool has no key data for: the keys that depend on it are not checked"
    why = (
        "The accepted override_transformer_config keys differ between Megatron-Core releases and MindSpeed "
        "branches; for a version the tool has no data for (an unreleased branch, say) it cannot tell a typo "
        "from a new field, so it says so instead of guessing."
    )
    bad = "--stack megatron-core=0.99.0"
    good = "--stack megatron-core=0.18.0"
    no_fixture = "depends on --stack; tests/test_transformer_config.py pins an unknown version"
