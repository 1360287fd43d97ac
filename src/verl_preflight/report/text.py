"""gcc-style text: `path:line:col: severity: message [RULE] (profiles: ...)`, then a summary."""

from __future__ import annotations

from .printable import escape

MAX_PROFILE_TEXT = 100  # characters of a finding's profile description, at most (JSON lists them all)


def profile_text(profiles, all_profiles=None) -> str:
    """The smallest description of the profiles a finding holds in: nothing for a script-wide
    finding or the one default profile, `(all profiles)`, the values that pick exactly these
    (`(profiles: DEVICE=npu)`), a short list (`(profiles: DEVICE=gpu; DEVICE=npu)`), else what
    they share and how many they are (`(profiles: DEVICE=npu, 3 of 8)`)."""
    shown = list(dict.fromkeys(p.describe() for p in profiles))
    if not shown or shown == ["default"]:
        return ""
    if all_profiles is not None and len(all_profiles) > 1 and set(profiles) >= set(all_profiles):
        return " (all profiles)"
    if len(shown) > 1 and all_profiles is not None:  # exactly the profiles with these values: say those
        shared = _shared_env(profiles)
        keys = {k for k, _ in shared}
        every = all(keys <= {k for k, _ in p.env} for p in all_profiles)  # none stands for several values
        if shared and every and {p for p in all_profiles if all(s in p.env for s in shared)} == set(profiles):
            return " (profiles: " + " ".join(f"{k}={v}" if v is not None else f"{k} unset" for k, v in shared) + ")"
    listed = "; ".join(shown)
    if len(listed) <= MAX_PROFILE_TEXT:
        return " (profiles: " + listed + ")"
    common = [f"{k}={v}" if v is not None else f"{k} unset" for k, v in _shared_env(profiles)]
    total = f" of {len(all_profiles)}" if all_profiles else ""
    head = ", ".join(common)
    if len(head) > MAX_PROFILE_TEXT:
        head = head[: MAX_PROFILE_TEXT - 3] + "..."
    return f" (profiles: {head + ', ' if head else ''}{len(profiles)}{total})"


def _shared_env(profiles):
    first = profiles[0].env
    return [(k, v) for k, v in first if all((k, v) in p.env for p in profiles[1:])]


COLORS = {"error": "\033[1;31m", "warning": "\033[1;33m", "info": "\033[1;36m"}
RESET = "\033[0m"
CODES = (*COLORS.values(), RESET)  # the only escape sequences a text report holds


def finding_line(f, color: bool = False, all_profiles=None) -> str:
    """The finding's line, and a gcc-style note at the same place for each other thing said of
    the same mistake (another stack's or rule's view: `path:line:col: note: also warning ...`)."""
    where = f"{f.path}:{f.line}:{f.column}" if f.line else f.path
    severity = f"{COLORS[f.severity]}{f.severity}{RESET}" if color and f.severity in COLORS else f.severity
    line = f"{where}: {severity}: {escape(f.message)}{_related(f)} [{f.rule}]{profile_text(f.profiles, all_profiles)}"
    for other in f.also:
        line += f"\n{where}: note: also {other.severity}{profile_text(other.profiles, all_profiles)}: {escape(other.message)} [{other.rule}]"
    return line


def _related(f) -> str:
    """The other overrides of a mistake of several settings: `(see also lines 12, 21)`."""
    if not f.related:
        return ""
    lines = {line for path, line, _, _key in f.related if path == f.path} | {f.line}
    here = [
        (f"{line}:{col}" if len(lines) < len(f.related) + 1 else str(line)) if path == f.path else f"{path}:{line}"
        for path, line, col, _key in f.related
    ]  # a line and column where several are on one line
    return f" (see also line{'s' if len(here) > 1 else ''} {', '.join(here)})"


def counted(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def summary(results, findings, seconds: float) -> str:
    n_profiles = sum(len(r.profiles) for r in results)
    n_launches = sum(len(p.launches) for r in results for p in r.profiles)
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = sum(1 for f in findings if f.severity == "warning")
    return (
        f"{counted(len(results), 'script')}, {counted(n_profiles, 'profile')}, {counted(n_launches, 'launch')}".replace(
            "launchs", "launches"
        )
        + f": {counted(errors, 'error')}, {counted(warnings, 'warning')} {timing(seconds)}"
    )


def timing(seconds: float) -> str:
    """The end of the summary line: how long the run took."""
    return f"({seconds:.2f}s)"


def pass_notes(results, empty_folders=()) -> list[str]:
    """What passed without being checked: a folder with no script, a script with no verl
    launch, a profile the script rejects (exits by itself in). Not findings: the exit status
    does not change."""
    lines = [f"{d}: note: no *.sh script in this folder: nothing was checked" for d in empty_folders]
    lines += [f"{path}: note: not read: {why} (the checks that need it are skipped)" for path, why in refused(results)]
    for r in results:
        coverage = getattr(r, "coverage", None)
        if coverage is not None and not coverage.exhaustive and not coverage.capped:
            lines.append(f"{r.path}: note: profiles checked: {coverage.summary()}")
        inputs = getattr(r, "inputs", ())
        if inputs:  # variables the repository gives elsewhere: the script's inputs, not slips
            said = ", ".join(f"{name} ({where})" for name, where in inputs)
            lines.append(f"{r.path}: note: inputs from the environment: {said}")
        unchecked = getattr(r, "unchecked", None)
        if unchecked is not None:
            lines.append(f"{r.path}: note: {unchecked.message}")
        if unchecked is not None and not any(p.launches for p in r.profiles):
            continue  # the note above says why no profile launches
        no_launch = getattr(r, "no_launch", None)
        if no_launch is not None:  # an installer, a wrapper: one line, not one per profile
            lines.append(f"{r.path}: note: {no_launch.message}")
            continue
        used = {p.profile.env for p in r.profiles if any(a.relation == "given" for a in p.profile.assumptions)}
        rejected = [p.profile for p in r.profiles if p.status == "rejected" and p.profile.env not in used]
        idle = [p.profile for p in r.profiles if p.status == "no-launch"]
        if rejected:  # (a profile that stops at a guard, followed as used correctly, is checked)
            lines.append(f"{r.path}: note: {_some_profiles(rejected, 'is rejected', 'are rejected')}: the script "
                         "exits by itself there, nothing to check")
        if idle:
            lines.append(f"{r.path}: note: {_some_profiles(idle, 'runs no verl launch', 'run no verl launch')}")
    return lines


def refused(results) -> list[tuple[str, str]]:
    """[(path, why)] of the files of verl, Megatron or a model the run's checks asked for and the
    bounded reader refused (a FIFO, a device such as a link to /dev/zero, a file larger than any
    source) or `ast.parse` gave up on (source.UNPARSED): named once a run, whatever script asked first."""
    import os
    import stat

    from ..core.bounded_read import SOURCE_MAX_BYTES
    from ..store.dependencies import FILE, SOURCES, UNPARSED, kind_of

    paths = sorted({p for r in results for key in r.deps if key.startswith(SOURCES) for p in key[len(SOURCES) :].split(os.pathsep) if p})
    out = []
    for path in paths:
        kind, subject = kind_of(path)
        if kind == UNPARSED:
            out.append((subject, "it nests too deeply for Python's parser"))
            continue
        if kind != FILE:  # (a folder's listing, the files that spell a name)
            continue
        try:
            info = os.stat(path)
        except OSError:
            continue  # missing: nothing to name
        if not stat.S_ISREG(info.st_mode):
            out.append((path, "not a regular file"))
        elif info.st_size > SOURCE_MAX_BYTES:
            out.append((path, f"larger than {SOURCE_MAX_BYTES} bytes"))
    return out


MAX_LISTED = 120  # characters of profile names a note lists; the rest are counted (JSON has them all)


def _some_profiles(profiles, one: str, many: str) -> str:
    """`profile A is rejected`, or `3 profiles are rejected (A; B; and 1 more)`: one note a script."""
    names = list(dict.fromkeys(p.describe() for p in profiles))
    if len(names) == 1:
        return f"profile {names[0]} {one}"
    shown: list[str] = []
    for name in names:
        if shown and len("; ".join([*shown, name])) > MAX_LISTED:
            break
        shown.append(name)
    rest = len(names) - len(shown)
    return f"{len(names)} profiles {many} ({'; '.join(shown)}{f'; and {rest} more' if rest else ''})"


def target_lines(result, all_profiles) -> list[str]:
    """`path: note: checked against ...`: the target of the script's launches (docs/checks.md, "The target"),
    one line per distinct target, naming its profiles when they are not all of them."""
    from .targets import grouped

    return [
        f"{result.path}: note: checked against {text}{profile_text(profiles, all_profiles)}"
        for text, profiles in grouped(result)
    ]


def render(
    results, findings, seconds: float, quiet: bool = False, color: bool = False, empty_folders=(), fix_lines=()
) -> str:
    """`fix_lines`: after --fix, the fixes refused and what was fixed (before the summary). A script
    with findings is headed by what it was checked against (not with `quiet`)."""
    by_script = {r.path: [p.profile for p in r.profiles] for r in results}
    shown = {id(f) for f in findings if not (quiet and f.severity == "info")}
    lines = []
    for r in results:
        mine = [f for f in r.findings if id(f) in shown]
        if mine and not quiet and any(f.severity != "info" for f in mine):
            lines += target_lines(r, by_script.get(r.path))
        lines += [finding_line(f, color, by_script.get(r.path)) for f in mine]
    if not quiet:
        lines += pass_notes(results, empty_folders)
    lines += fix_lines
    from .targets import verls_lines

    if not quiet:
        # what the run checked against, said once for each verl (also when it found nothing)
        lines += [f"validate-scripts: note: {said}" for said in verls_lines(results)]
        lines.append(summary(results, findings, seconds))
    elif lines:  # --quiet: the findings, then in one line what they were checked against
        lines.append("validate-scripts: " + "; ".join(verls_lines(results)))
    return "\n".join(lines) + ("\n" if lines else "")
