"""More profiles than --max-profiles; the rest were not checked."""

from __future__ import annotations

from .. import Rule


class ProfilesCapped(Rule):
    id = "profiles-capped"
    severity = "warning"
    stage = "tool"
    summary = "more profiles than --max-profiles; the rest were not checked"
    why = "Profiles are the product of every switch's values."
    bad = "six independent switches"
    good = "fewer switches, or --profile to pin some"
