"""Not even every arm and every pair of switch values fits --max-profiles; some were not checked."""

from __future__ import annotations

from .. import Rule


class ProfilesCapped(Rule):
    id = "profiles-capped"
    severity = "warning"
    stage = "tool"
    summary = "every arm and every pair of switch values do not fit in --max-profiles profiles; some were not checked"
    why = (
        "Profiles are the combinations of the script's switches. When they are more than --max-profiles, "
        "the profiles checked are chosen so that every arm of every switch is taken and every pair of values "
        "of two switches meets (a covering array). Only when not even that fits are pairs left unchecked."
    )
    bad = "a three-way and a two-way switch (6 pairs of values) with --max-profiles 4"
    good = "fewer switch values, --profile to pin some, or a larger --max-profiles"
