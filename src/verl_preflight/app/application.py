"""The application: what one command line does, between its parsed arguments (cli.py) and the
reports (report/).

`validate`: settings -> setup (files, verl config tree, options) -> check every script (the
pipeline, runner.run_files) -> the --fix loop or the --diff -> the report -> one exit policy.
`matrix` does it once per verl release, `render` shows what each profile hands verl, and
`rule_docs` prints the rules' own documentation. Nothing here composes output text: the lines
come from report/ (report.console for the lines on standard error).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

from ..report import console
from .user_paths import relocate, under

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
MAX_FIX_PASSES = 10  # a fix can make another possible (a renamed key whose value is then fixed)


class UsageError(Exception):
    """The command line or the project's settings ask for something that cannot be done (exit 2)."""


@dataclass(frozen=True)
class ProfileChoice:
    """--profile: this machine's environment (`current`), or the environments given, or neither."""

    current: bool = False
    pinned: tuple | None = None  # (dict, ...) of KEY=VAL environments


@dataclass
class Setup:
    files: list
    source: object  # hydra_stage.tree.ConfigSource
    caches: object  # hydra_stage.tree.ConfigCaches
    opts: object  # validate.Options
    notes: tuple = ()  # the walk's notes (discover.py), said on standard error
    # --dependents: script -> the helpers given that it may read (discover.sourcing_candidates);
    # its result is reported only where its check read one of them
    dependents: dict | None = None


def run_files(*args, **kwargs):
    """runner.run_files, imported on first use: `--version` and `--help` load none of the pipeline."""
    from .runner import run_files as run

    return run(*args, **kwargs)


def exit_status(findings, strict: bool, unusable: bool = False) -> int:
    """The one exit policy: 2 when the tool could not do its job, 1 for an error (or a warning
    with --strict), else 0."""
    if unusable:
        return EXIT_USAGE
    if any(f.severity == "error" for f in findings):
        return EXIT_FINDINGS
    if strict and any(f.severity == "warning" for f in findings):
        return EXIT_FINDINGS
    return EXIT_OK


# ---- setup ----------------------------------------------------------------------------


def setup(args) -> Setup:
    """The files to check, the verl config tree, and the options every script is checked with."""
    from ..core.config_location import ConfigTreeError
    from ..hydra_stage.tree import ConfigCache, ConfigCaches
    from ..pipeline.options import Options
    from .discover import DiscoverError, discover

    if args.max_profiles < 1:
        raise UsageError("--max-profiles must be at least 1")
    from ..store import cache_files

    cache_files.use_disk(not args.no_cache)
    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        raise UsageError("-j/--jobs must be at least 1 (leave it out for the CPU count)")
    notes: list[str] = []
    try:
        files = discover(args.paths, getattr(args, "excludes", ()), notes)
    except DiscoverError as err:
        raise UsageError(str(err)) from err
    for line in notes:
        console.plain(line)
    dependents = _dependents(files, args) if getattr(args, "dependents", False) else None
    if dependents:
        files = files + list(dependents)
    try:
        source, explicit = _run_verl(args)
    except ConfigTreeError as err:
        raise UsageError(str(err)) from err
    try:
        from ..target.releases import release_source

        caches = ConfigCaches(
            ConfigCache(source, use_disk=not args.no_cache), explicit=explicit, release=release_source
        )
    except OSError as err:
        raise UsageError(f"cannot read the verl config tree: {err}") from err
    choice: ProfileChoice = args.profile
    probed = devices = None
    if choice.current:
        from ..target.machine import probe_device, probe_devices

        probed, devices = probe_device(), probe_devices()
        for line in console.probed(probed, devices):
            console.say(line)
    schema = _schema(getattr(args, "schema", None))
    _check_severity_ids(args, schema)
    opts = Options(
        max_profiles=args.max_profiles,
        pinned=list(choice.pinned) if choice.pinned else None,
        current=choice.current,
        max_bytes=args.max_bytes,
        schema=schema,
        stack=args.stack,
        stdin=_stdin(files, args.max_bytes),
        probed_device=probed,
        device=_device(args),
        args=args.script_args,
        devices=devices,
        cluster=getattr(args, "cluster", None),
        **_model_settings(args),
    )
    return Setup(files, source, caches, opts, tuple(notes), dependents)


def _run_verl(args):
    """(the verl of the run, whether the user named it): the one the command line,
    VERL_CONFIG_DIR or the settings name (two that name different trees: a usage error naming
    both), else the installed one, else the newest release this tool knows, fetched
    (config_location.DEFAULT_RELEASE). A launch of a project that carries its own verl is
    checked against that one unless the run names one."""
    from ..core.config_location import DEFAULT_RELEASE, INSTALL_HINT, ConfigTreeError, installed_root
    from ..hydra_stage.tree import locate
    from ..target.releases import release_source

    versions = getattr(args, "verl", None)
    named = [f"--verl {versions[0]}"] if versions else []
    if args.verl_config:
        named.append(f"--verl-config {args.verl_config}")
    env = os.environ.get("VERL_CONFIG_DIR")
    if env and not (args.verl_config and os.path.realpath(env) == os.path.realpath(args.verl_config)):
        named.append(f"VERL_CONFIG_DIR={env}")
    if len(named) > 1:
        raise UsageError(f"{' and '.join(named)} name two verl config trees: give one")
    if versions and versions[0].startswith("git:"):  # a commit of verl's repository (releases.commit_source)
        from ..target.releases import commit_source

        return commit_source(versions[0][len("git:") :]), True
    if versions:
        return release_source(versions[0]), True
    if args.verl_config or env:
        return locate(args.verl_config), True
    python = getattr(args, "python", None) or getattr(args, "settings", {}).get("python")
    if python:
        from ..target.interpreter import InterpreterError, interpreter_verl

        try:
            return interpreter_verl(python), False
        except InterpreterError as err:
            raise UsageError(f"--python {python}: {err}") from err
    if installed_root() is not None:
        return locate(None), False
    try:
        fetched = release_source(DEFAULT_RELEASE)
    except ConfigTreeError as err:
        raise ConfigTreeError(
            f"no verl installed here, and the newest release this tool knows cannot be fetched ({err}): install "
            f"one without its heavy dependencies with `{INSTALL_HINT}`, or pass --verl-config DIR"
        ) from err
    from dataclasses import replace

    return replace(fetched, origin=f"no verl installed: the release {DEFAULT_RELEASE}'s wheel"), False


def _dependents(files: list, args) -> dict:
    """--dependents: the other scripts of the given files' repositories that may source or run
    one of them, each with the helpers it may read."""
    from .discover import sourcing_candidates

    out: dict = {}
    for helper, scripts in sourcing_candidates(files, getattr(args, "excludes", ())).items():
        for script in scripts:
            out.setdefault(script, []).append(helper)
    return out


def _reading_helpers(results, dependents: dict | None, said: set) -> list:
    """The results to report under --dependents: the scripts given, and those of the others
    whose check read a given helper (ScriptResult.deps: every file the check read). Each such
    script is said once a run (`said`: the lines said so far; --fix checks again)."""
    if not dependents:
        return results
    from dataclasses import replace

    from .user_paths import shown

    cwd = os.getcwd()
    kept, readers = [], {}
    for r in results:
        helpers = dependents.get(r.path)
        if helpers is None or any(h in r.deps for h in helpers):
            kept.append(r)
            for h in helpers or ():
                if h in r.deps:
                    readers.setdefault(h, []).append(shown(r.path, cwd))
            line = (
                console.dependent(shown(r.path, cwd), [shown(h, cwd) for h in helpers if h in r.deps])
                if helpers
                else None
            )
            if line is not None and line not in said:
                said.add(line)
                console.say(line)
    for r in kept:  # a helper with no launch of its own: its launches are those of the scripts that read it
        if r.no_launch is not None and os.path.abspath(r.path) in readers:
            r.no_launch = replace(r.no_launch, read_by=tuple(readers[os.path.abspath(r.path)]))
    return kept


def _device(args) -> str | None:
    """--device, else [tool.validate-scripts] device, else None (each launch's own)."""
    device = getattr(args, "device", None) or getattr(args, "settings", {}).get("device")
    if device is not None and device not in ("gpu", "npu"):
        where = getattr(args, "severity_where", "[tool.validate-scripts]")
        raise UsageError(f"{where}: device: gpu or npu, not {device!r}")
    return device


def _model_settings(args) -> dict:
    directory = getattr(args, "model_config", None)
    if directory:
        from ..target.layout import ModelConfigError, shape_from_config

        try:
            shape_from_config(os.path.abspath(directory))
        except ModelConfigError as err:
            raise UsageError(f"--model-config: {err}") from err
        directory = os.path.abspath(directory)
    memory = getattr(args, "device_memory", None)
    if memory is not None and not memory > 0:
        raise UsageError("--device-memory must be a positive number of GB")
    return {"model_config": directory, "device_memory": memory}


def _stdin(files, max_bytes: int) -> bytes | None:
    """The script given as `-`, read once (workers get the bytes, not the stream)."""
    if "-" not in files:
        return None
    chunks, size = [], 0
    while size <= max_bytes:  # in pieces: `--max-bytes` is a limit, never an allocation
        chunk = sys.stdin.buffer.read(min(1 << 20, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _schema(path):
    """The policy schema: a user's file read and checked now (its mistakes are usage errors
    before anything runs); the shipped one when a script is first checked."""
    from ..rules.schema import SchemaError, ShippedSchema, load_schema

    if path is None:
        return ShippedSchema()
    try:
        return load_schema(path)
    except SchemaError as err:
        raise UsageError(str(err)) from err


# ---- the project's settings --------------------------------------------------------------


def apply_settings(args) -> None:
    """`[tool.validate-scripts]` from pyproject.toml fills what the command line left unset.
    An unknown key, or a severity for a rule id no rule has, exits 2 naming the file and key."""
    from .settings import FILE, KEYS, project_settings, settings_start, unknown_keys

    args.settings_start = settings_start(args.paths)  # from the scripts given, as ruff looks from its files
    settings = project_settings(args.settings_start, use_disk=not getattr(args, "no_cache", False))
    args.settings = settings
    where = f"[tool.validate-scripts] in {settings.get(FILE)}"
    for key in unknown_keys(settings):
        import difflib

        close = difflib.get_close_matches(key, KEYS, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(f"{where}: unknown key {key!r} ({hint}known: {', '.join(KEYS)})")
    if not args.paths:
        args.paths = list(settings.get("paths", []))
    if not args.paths:
        raise UsageError("no paths given (try: validate-scripts examples)")
    if not args.verl and not args.verl_config:
        verl = settings.get("verl")
        args.verl = [verl] if isinstance(verl, str) else list(verl or []) or None
        args.verl_config = settings.get("verl-config")
        if args.verl and args.verl_config:
            raise UsageError(f"{where}: verl and verl-config name two verl config trees: give one")
    if args.schema is None:
        args.schema = settings.get("schema")
    args.excludes = list(settings.get("exclude", []))
    severity = settings.get("severity", {})
    if not isinstance(severity, dict) or not all(v in ("error", "warning", "info", "off") for v in severity.values()):
        raise UsageError(f"{where}: severity: map rule ids to error, warning, info or off")
    args.severity = dict(severity)
    for rid in getattr(args, "enable", None) or ():  # --enable RULE: on, at the severity the settings give it
        if args.severity.get(rid, "off") == "off":
            args.severity[rid] = ON
    args.severity_where = where


def _check_severity_ids(args, schema) -> None:
    """Every rule id in the severity table names a rule (shipped, or a policy of the schema)."""
    severity = getattr(args, "severity", {}) or {}
    if not severity:
        return
    import difflib

    from ..rules import registry

    known = set(registry()) | {p.id for p in getattr(schema, "policies", ())}
    for rid in severity:
        if rid not in known:
            close = difflib.get_close_matches(rid, sorted(known), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            where = "--enable" if severity[rid] == ON else f"{args.severity_where}: severity"
            raise UsageError(f"{where}: no rule {rid!r}{hint}; --list-rules lists them")


ON = "on"  # --enable RULE: the rule at its own severity


# ---- settings per script ---------------------------------------------------------------------


def settings_groups(args) -> dict:
    """The scripts the paths name, by the settings file that applies to each (the nearest
    pyproject.toml with the table above it, as ruff finds settings per file): {file or None:
    [scripts]}, in the order first met. One group (the usual case) is checked as one run."""
    from .discover import DiscoverError, discover
    from .settings import FILE, project_settings

    try:
        files = discover(args.paths, getattr(args, "excludes", ()))
    except DiscoverError:
        return {None: list(args.paths)}  # (setup says why)
    groups: dict = {}
    use_disk = not getattr(args, "no_cache", False)
    for f in files:
        where = project_settings(os.path.dirname(os.path.abspath(f)), use_disk).get(FILE) if f != "-" else None
        groups.setdefault(where, []).append(f)
    return groups


def show_settings(args) -> int:
    """--show-settings: for each script the paths name, the settings it is checked with and where
    they come from."""
    from .settings import FILE

    for where, files in settings_groups(args).items():
        group = _grouped_args(args, files)
        settings = {k: v for k, v in group.settings.items() if k != FILE}
        source = f"[tool.validate-scripts] in {where}" if where else "no [tool.validate-scripts] above it: the defaults"
        for f in files:
            shown = ", ".join(f"{k} = {v!r}" for k, v in sorted(settings.items())) or "(nothing set)"
            sys.stdout.write(f"{f}: {source}: {shown}\n")
    return EXIT_OK


def _grouped_args(given, files):
    """The command line's options for `files` alone, with the settings that apply to them."""
    import argparse

    group = argparse.Namespace(**vars(given))
    group.paths = list(files)
    apply_settings(group)
    return group


def validate_groups(given, groups: dict, typed) -> int:
    """Scripts whose projects have settings of their own: each group checked with its own (verl,
    schema, severity, stack, device), one report of them all, one exit status. `typed(args)`
    parses the options that are more than strings (cli._typed)."""
    if given.fix or given.diff:
        raise UsageError("--fix and --diff: the scripts given belong to projects with settings of their own; "
                         "give one project's scripts at a time")
    start = time.perf_counter()
    results, unreadable, first = [], [], None
    for files in groups.values():
        args = _grouped_args(given, files)
        typed(args)
        run = setup(args)
        first = first or (args, run)
        from ..store.result_cache import ResultCache

        cache = ResultCache(run.source, run.caches.main.digest, run.opts, use_disk=not args.no_cache)
        found, missed = _checked(args, run, cache, set())
        results += found
        unreadable += missed
    args, run = first
    findings = [f for r in results for f in r.findings]
    files = [f for group in groups.values() for f in group]
    _report(args, results, findings, run.source, time.perf_counter() - start, files, [], run.opts.cluster)
    for line in unreadable:
        console.say(line)
    return exit_status(findings, args.strict, bool(unreadable))


def _checked(args, run, results_cache, said_dependents: set):
    """(results, unreadable) of the run's files, each with the severities the settings give."""
    results, unreadable = run_files(run.files, run.caches, run.opts, args.jobs or 0, results_cache)
    results = _reading_helpers(results, run.dependents, said_dependents)
    relocate(results, run.files)
    for r in results:
        r.findings = _reseverity(r.findings, args.severity)
    return results, unreadable


def _reseverity(findings, severity: dict) -> list:
    """[tool.validate-scripts] severity: a rule's findings at another severity, or none (off); an
    opt-in rule's (rules.Rule.opt_in) only where the severity table or --enable names it."""
    from dataclasses import replace

    from ..rules import get

    out = []
    for f in findings:
        level = severity.get(f.rule)
        if level == "off":
            continue
        if level is None:
            rule = get(f.rule)
            if rule is not None and rule.opt_in:
                continue
        out.append(replace(f, severity=level) if level and level != ON else f)
    return out


# ---- the commands -------------------------------------------------------------------------


def rule_docs(args) -> None:
    """--list-rules, --explain RULE: the rules' own documentation."""
    if args.list_rules:
        from ..report.rule_docs import listing

        sys.stdout.write(listing())
        return
    from ..report.rule_docs import explain, nearest

    text = explain(args.explain)
    if text is None:
        close = nearest(args.explain)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise UsageError(f"no rule {args.explain!r}{hint}; --list-rules lists them")
    sys.stdout.write(text)


def preflight(args) -> int:
    """`preflight --ray-address ADDRESS SCRIPT...`: the scripts checked as this machine will
    run them, against the Ray cluster at that address (target/cluster.py); exit 2 when there
    is no cluster to ask."""
    from ..target.cluster import ClusterError, connect, disconnect

    try:
        cluster = connect(args.ray_address, args.probe_timeout)
    except ClusterError as err:
        raise UsageError(f"preflight: {err}") from err
    try:
        console.say(f"note: {cluster.describe()}")
        args.cluster = cluster
        return validate(args)
    finally:
        disconnect()


def validate(args, argv=None) -> int:
    """Check the scripts (and --fix or --diff them); the report on standard output. `argv`:
    the command line, under which a start finds the kept report again (command_memo.py)."""
    if args.fix and "-" in args.paths:
        raise UsageError("--fix cannot rewrite standard input (-); --diff shows the changes")
    if getattr(args, "unsafe_fixes", False) and not (args.fix or args.diff):
        raise UsageError("--unsafe-fixes goes with --fix or --diff")
    start = time.perf_counter()
    run = setup(args)
    from ..hydra_stage.tree import entry_origin
    from ..store.result_cache import ResultCache

    origin = entry_origin(run.source)
    said = console.entry_origin(origin)
    if said:
        console.say(said)
    results_cache = ResultCache(run.source, run.caches.main.digest, run.opts, use_disk=not args.no_cache)
    if not args.no_cache:
        from ..store.cache_files import refused

        why = refused()
        if why:
            console.say(f"note: no cache this run: {why}")

    memo = _report_memo(args, run, results_cache)
    kept = memo.get() if memo is not None else None
    if kept is not None:
        from .report_memo import replay

        _keep_command(argv, args, run, origin, memo)
        return replay(kept, time.perf_counter() - start)

    said_dependents: set = set()

    def check():
        results_cache.forget()
        return _checked(args, run, results_cache, said_dependents)

    results, unreadable = check()
    said_after = console.unread_profile_keys(results, run.opts.pinned)
    for line in said_after:
        console.say(line)
    from .fix_files import Tree

    tree = Tree.of(args.paths)
    if args.diff:
        return _diff(results, unreadable, run.opts, tree, args.unsafe_fixes)
    fix_lines: list[str] = []
    if args.fix and not unreadable:
        results, unreadable, fix_lines, failed = _fix(results, check, tree, run.opts.max_bytes, args.unsafe_fixes)
        if failed:
            unreadable = [*unreadable, *failed]
    findings = [f for r in results for f in r.findings]
    seconds = time.perf_counter() - start
    shown, written = _report(args, results, findings, run.source, seconds, run.files, fix_lines, run.opts.cluster)
    for line in fix_lines if not shown else []:
        console.plain(line)
    for line in unreadable:
        console.say(line)
    status = exit_status(findings, args.strict, bool(unreadable))
    if memo is not None and not unreadable and all(r.deps for r in results):  # each result says what it read
        if memo.put(_digests(results), _kept(written, args, seconds, said_after, status)):
            _keep_command(argv, args, run, origin, memo)
    return status


def _keep_command(argv, args, run, origin: str, memo) -> None:
    """Where the report of this command line is kept, for the next start (command_memo.py)."""
    if argv is not None:
        from . import command_memo

        command_memo.put(argv, args, run, origin, memo.key)


def _report_memo(args, run, results_cache):
    """The kept report of a run like this one (report_memo.py), or None where none is kept."""
    from .report_memo import ReportMemo, eligible, key_of

    if not results_cache.enabled or not eligible(args, run.opts):
        return None
    return ReportMemo(key_of(results_cache.key, run.files, args, use_color(args.color)))


def _kept(written: str, args, seconds: float, said: list, status: int):
    """What this run wrote, to be written again by a run with nothing changed: the text
    report without its time (the next run writes its own)."""
    from ..report.text import timing
    from .report_memo import Kept

    tail = timing(seconds) + "\n"
    timed = args.format == "text" and written.endswith(tail)
    return Kept(written[: -len(tail)] if timed else written, timed, list(said), status)


def _report(args, results, findings, source, seconds: float, files, fix_lines, cluster=None) -> tuple[bool, str]:
    """The report in the chosen format on standard output, and the text written; True when it
    holds the --fix lines (the text report does; the machine formats leave them to standard
    error)."""
    if args.format == "json":
        from ..report import json_report

        out = json_report.render(results, findings, source, cluster)
    elif args.format == "sarif":
        from ..report import sarif

        out = sarif.render(results, findings, source, cluster)
    elif args.format == "github":
        from ..report import github

        out = github.render(results, findings)
    else:
        from ..report import text

        empty = _empty_folders(args.paths, files)
        out = text.render(results, findings, seconds, args.quiet, use_color(args.color), empty, fix_lines)
    written = _write(out, args.format, results, args)
    return args.format not in ("json", "sarif", "github"), written


def _write(out: str, fmt: str, results, args) -> str:
    """A report on standard output as data: the scripts' secrets masked (unless --show-secrets),
    their control characters escaped (report.printable). Returns what was written."""
    from ..report import printable

    written = printable.printed(out, fmt, printable.secrets_of(results, getattr(args, "show_secrets", False)))
    sys.stdout.write(written)
    return written


def _fix(results, check, tree, max_bytes: int, unsafe_fixes: bool):
    """--fix: write the plan's changes, check again, repeat until nothing changes (ruff's loop).
    (results, unreadable, report lines, write failures): the results are those of the fixed files.
    Only files inside `tree` (the paths given) are written; the edits of others are refused."""
    from ..pipeline import fix
    from .fix_files import NotWritten, write_in_place

    fixed, changed, failed, unreadable = 0, set(), [], []
    for _ in range(MAX_FIX_PASSES):
        plan = fix.plan(results, tree.refuses, unsafe_fixes)
        made, problems = _changes(plan, _digests(results), max_bytes)
        failed += problems
        written = set()
        for path, (old, new, stamp) in made.items():
            try:
                write_in_place(path, old, new, stamp)
            except NotWritten as why:
                failed.append(f"{path}: {why}")
                continue
            except OSError as err:
                failed.append(f"{path}: cannot write: {err.strerror or err}")
                continue
            changed.add(path)
            written.update(plan.edits[path])
        count = sum(1 for f in plan.fixed if f.fix.edit in written)
        if not count:
            break  # the plan is of these results: its refusals are the report's
        fixed += count
        results, unreadable = check()
        plan = None
    if plan is None:  # the passes ran out: the refusals of the results checked last
        plan = fix.plan(results, tree.refuses, unsafe_fixes)
    lines = [*console.refusals(plan), console.fixed(fixed, len(changed))]
    return results, unreadable, lines, failed


def _diff(results, unreadable, opts, tree, unsafe_fixes: bool) -> int:
    """--diff: the changes one pass of --fix would make, as a unified diff on standard output;
    what it would fix and what it refuses on standard error. Exit 1 when there is a change."""
    from ..pipeline import fix

    plan = fix.plan(results, tree.refuses, unsafe_fixes)
    made, problems = _changes(plan, _digests(results), opts.max_bytes, opts.stdin)
    for path in sorted(made):
        sys.stdout.write(_unified_diff(path, *made[path][:2]))
    sys.stdout.flush()  # the diff, then the summary: in this order on a terminal too
    for line in [*console.refusals(plan), *problems, *unreadable]:
        console.plain(line)
    count = sum(1 for f in plan.fixed if f.fix.edit.path in made)
    console.plain(console.would_fix(count, len(made)))
    if unreadable:
        return EXIT_USAGE
    return EXIT_FINDINGS if made else EXIT_OK


# ---- the files --fix writes ---------------------------------------------------------------


def _changes(p, digests: dict, max_bytes: int, stdin: bytes | None = None) -> tuple[dict, list[str]]:
    """({path: (old bytes, new bytes, stamp)}, problems): the plan made on the files as they are
    now (`-`: the script read from standard input; stamp None), read as the run read them (at
    most max_bytes). A file that changed since the run (its digest in `digests`, by absolute
    path, differs) is left alone."""
    import hashlib

    from ..core.edits import apply_edits
    from .fix_files import NotWritten, read

    out, problems = {}, []
    for path, edits in p.edits.items():
        try:
            if path == "-":
                old, stamp = stdin or b"", None
            else:
                old, stamp = read(path, max_bytes)
        except NotWritten as why:
            problems.append(f"{path}: {why}")
            continue
        if path != "-" and digests.get(os.path.abspath(path)) not in (None, hashlib.sha256(old).hexdigest()):
            problems.append(f"{path}: changed while it was checked; not fixed")
            continue
        new = apply_edits(old, edits)
        if new != old:
            out[path] = (old, new, stamp)
    return out, problems


def _unified_diff(path: str, old: bytes, new: bytes) -> str:
    a = old.decode("utf-8", "replace").splitlines(keepends=True)
    b = new.decode("utf-8", "replace").splitlines(keepends=True)
    import difflib

    lines = list(difflib.unified_diff(a, b, fromfile=path, tofile=path))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _digests(results) -> dict:
    """The SHA-256 of every file the run read, by absolute path (what the edits were made on)."""
    out: dict = {}
    for r in results:
        out.update(r.deps)
    return out


def _empty_folders(paths, files) -> list[str]:
    """Folders given on the command line in which no script was found."""
    out = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            top = os.path.abspath(p)  # absolute: `.` holds `x.sh` (a walk of `.` gives `./x.sh`)
            if not any(under(os.path.abspath(f), top) for f in files):
                out.append(p)
    return out


def matrix(args) -> int:
    """One run per verl release, every output option honoured: a table of which scripts
    compose on which release and the findings (text), one report per release (json), one
    SARIF run per release, or the annotations with the releases they hold on (github)."""
    if args.fix or args.diff:
        raise UsageError("--fix and --diff check against one verl release: give --verl once")
    versions = list(dict.fromkeys(args.verl))
    table: dict[str, dict[str, str]] = {}
    reports, by_version = [], {}
    from ..report import matrix as report_matrix

    for version in versions:
        args.verl = [version]
        run = setup(args)
        results, unreadable = run_files(run.files, run.caches, run.opts, args.jobs or 0)
        for line in unreadable:
            console.say(line)
        if unreadable:
            return EXIT_USAGE
        relocate(results, run.files)
        for r in results:
            r.findings = _reseverity(r.findings, args.severity)
            table.setdefault(r.path, {})[version] = report_matrix.cell(r.findings)
        findings = [f for r in results for f in r.findings]
        reports.append((results, findings, run.source))
        by_version[version] = findings
    out = report_matrix.document(args.format, versions, reports, table, by_version, args.quiet, use_color(args.color))
    _write(out, args.format, [r for rs, _, _ in reports for r in rs], args)
    return exit_status([f for fs in by_version.values() for f in fs], args.strict)


def render(args) -> int:
    """`render`: what each profile of each script hands verl."""
    run = setup(args)
    results, unreadable = run_files(run.files, run.caches, run.opts)
    for line in unreadable:
        console.say(line)
    if unreadable:
        return EXIT_USAGE
    from ..pipeline.rendering import annotate
    from ..report.render import render as render_text
    from ..report.render import render_json

    annotate(results, run.caches, args.as_, run.opts)  # what is shown besides the words, computed
    out = render_json(results, args.as_) if args.format == "json" else render_text(results, args.as_)
    _write(out, args.format, results, args)
    return EXIT_OK


def use_color(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()
