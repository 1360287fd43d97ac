"""A `# validate-scripts: disable=` directive that silences nothing."""

from __future__ import annotations

from .. import Rule


class UnusedSuppression(Rule):
    id = "unused-suppression"
    severity = "warning"
    stage = "tool"
    summary = "a `# validate-scripts: disable=` directive that silences nothing"
    why = "Stale directives hide the next real finding."
    bad = "# validate-scripts: disable=duplicate-key\nTP=2"
    good = "TP=2"
