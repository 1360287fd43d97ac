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


def verls(results) -> list[tuple[str, int]]:
    """[(the verl a run's launches were checked against, as said: `verl 0.5.0 (pinned, ...)`, how
    many launches)], in the order first met: the line every report format gives once."""
    counts: dict[str, int] = {}
    for r in results:
        for p in r.profiles:
            for la in p.launches:
                verl = getattr(la.target, "verl", None) if la.target is not None else None
                if verl is None:
                    continue
                text = verl.describe() + (": not at hand, not checked" if getattr(verl, "missing", None) else "")
                counts[text] = counts.get(text, 0) + 1
    return list(counts.items())


def verls_lines(results) -> list[str]:
    """`checked against verl 0.9.1 (installed) (7 launches)`: one line per verl; none without launches."""
    return [f"checked against {text} ({n} launch{'es' if n != 1 else ''})" for text, n in verls(results)]
