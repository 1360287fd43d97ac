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


def in_brief(result, profiles) -> str:
    """What the launches of `profiles` (a finding's; all of them for a script-wide one) were
    checked against, in brief: `verl 0.9.1, npu` (the verls and devices they share, joined
    with `/` where they differ); '' when none was checked."""
    wanted = set(profiles) or {p.profile for p in result.profiles}
    verls: list[str] = []
    devices: list[str] = []
    for p in result.profiles:
        if p.profile not in wanted:
            continue
        for la in p.launches:
            target = la.target
            if target is None or getattr(target, "verl", None) is None:
                continue
            version = target.verl.verl_version or "(version not known)"
            if f"verl {version}" not in verls:
                verls.append(f"verl {version}")
            kind = target.device.kind or "device not known"
            if kind not in devices:
                devices.append(kind)
    return ", ".join(part for part in ("/".join(verls), "/".join(devices)) if part) if verls else ""


def grouped(result) -> list[tuple[str, list]]:
    """[(target description, [profiles])] of one script, in the order first met."""
    groups: dict[str, list] = {}
    for profile, shown in profile_targets(result).items():
        for text in shown:
            groups.setdefault(text, []).append(profile)
    return list(groups.items())


def verls(results) -> list[tuple[str, int, int]]:
    """[(the verl a run's launches were meant for, as said: `verl 0.5.0 (pinned, ...)`, how many of
    them were checked against it, how many not)], in the order first met: the line every report
    format gives once."""
    counts: dict[str, list[int]] = {}
    for r in results:
        for p in r.profiles:
            for la in p.launches:
                verl = getattr(la.target, "verl", None) if la.target is not None else None
                if verl is None:
                    continue
                text = verl.describe() + (": not at hand" if getattr(verl, "missing", None) else "")
                counts.setdefault(text, [0, 0])[0 if getattr(la, "unchecked", None) is None else 1] += 1
    return [(text, checked, unchecked) for text, (checked, unchecked) in counts.items()]


def _launches(n: int) -> str:
    return f"{n} launch{'es' if n != 1 else ''}"


def verls_lines(results) -> list[str]:
    """`checked against verl 0.9.1 (installed) (7 launches)`, with `, 2 not checked` where some of
    them were not (their notes say why); one line per verl; none without launches."""
    out = []
    for text, checked, unchecked in verls(results):
        if checked:
            rest = f", {unchecked} not checked" if unchecked else ""
            out.append(f"checked against {text} ({_launches(checked)}{rest})")
        else:
            out.append(f"not checked against {text} ({_launches(unchecked)}: their notes say why)")
    return out
