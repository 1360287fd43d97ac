"""What each script was checked against (its launches' targets), for every report format."""

from __future__ import annotations


def profile_targets(result) -> dict:
    """{profile: [target description, ...]} of one script: the distinct targets of its launches."""
    out: dict = {}
    for p in result.profiles:
        shown = out.setdefault(p.profile, [])
        for la in p.launches:
            if la.target is not None and la.target.describe() not in shown:
                shown.append(la.target.describe())
    return out


def grouped(result) -> list[tuple[str, list]]:
    """[(target description, [profiles])] of one script, in the order first met."""
    groups: dict[str, list] = {}
    for profile, shown in profile_targets(result).items():
        for text in shown:
            groups.setdefault(text, []).append(profile)
    return list(groups.items())
