"""Command line: arguments, exit codes (0 clean, 1 errors, 2 could not run), never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
import time

from . import __version__
from .runner import run_files

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


CURRENT = {"__current__": "1"}  # --profile current: this machine's environment


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="validate-scripts",
        description="Check verl launch scripts statically: what bash hands verl in every profile, "
        "checked with Hydra's own semantics.",
        epilog="`validate-scripts render SCRIPT...` prints what each profile hands verl "
        "(`validate-scripts render --help`). `--profile current` checks the one profile this machine "
        "will run. Exit status: 0 no error, 1 errors (or warnings with --strict), 2 could not run.",
    )
    p.add_argument("--version", action="version", version=f"validate-scripts {__version__}")
    p.add_argument("paths", nargs="*", help="script files or folders (every *.sh below); - reads standard input")
    p.add_argument("--verl-config", metavar="DIR", help="verl's trainer/config folder")
    p.add_argument(
        "--verl",
        metavar="VERSION",
        action="append",
        help="check against this verl release's config (its wheel is fetched once with "
        "pip download --no-deps); repeat for a compatibility matrix",
    )
    p.add_argument("--format", choices=["text", "json", "sarif", "github"], default="text")
    p.add_argument(
        "--profile",
        action="append",
        metavar="KEY=VAL[,KEY=VAL...]",
        help='check only this environment (repeatable; a value with a comma: KEY="a,b"); others are '
        "unset. `--profile current`: this machine's environment, DEVICE probed like the scripts do",
    )
    p.add_argument(
        "--stack",
        action="append",
        metavar="PKG=VERSION",
        help="the stack the launches will meet, e.g. megatron-core=0.18.0, mindspeed=core_r0.18.0 "
        "(repeatable; PKG: verl, megatron-core, megatron-bridge, mbridge, mindspeed)",
    )
    _device_option(p)
    _args_option(p)
    p.add_argument("--max-profiles", type=int, default=64)
    p.add_argument("--max-bytes", type=int, default=5 * 1024 * 1024)
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="worker processes, at least 1 (default: the CPU count; output is the same for any N)",
    )
    p.add_argument("--strict", action="store_true", help="warnings also fail (exit 1)")
    fixing = p.add_mutually_exclusive_group()
    fixing.add_argument(
        "--fix",
        action="store_true",
        help="rewrite the scripts where a fixable rule's fix holds in every profile, then report what remains",
    )
    fixing.add_argument(
        "--diff",
        action="store_true",
        help="print the changes --fix would make as a unified diff, write nothing (exit 1 when there are any)",
    )
    p.add_argument("--explain", metavar="RULE", help="print a rule's documentation")
    p.add_argument("--list-rules", action="store_true", help="list every rule with its severity")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument("--quiet", "-q", action="store_true", help="findings only, no summary or info")
    p.add_argument("--schema", metavar="FILE", help="policy schema (YAML) instead of the shipped one")
    _model_options(p)
    p.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        metavar="WHEN",
        help="colour the severities: auto (the default: on a terminal, unless NO_COLOR is set), always or never",
    )
    return p


def _args_option(p) -> None:
    p.add_argument(
        "--args",
        metavar="'WORDS'",
        help="the positional arguments the scripts are started with, as one shell-quoted string "
        "(default: none; a script that stops at a guard on them is also checked with them given, unknown)",
    )


def _device_option(p) -> None:
    p.add_argument(
        "--device",
        choices=["gpu", "npu"],
        help="the device every launch runs on (default: each launch's own, from DEVICE, trainer.device, "
        'Ascend\'s environment, ...; unknown where nothing says: README, "The target")',
    )


def _model_options(p) -> None:
    p.add_argument(
        "--model-config",
        metavar="DIR",
        help="the trained model's folder (its config.json) for the shape and memory checks; "
        "default: the shipped shapes of known models, by the model path's name",
    )
    p.add_argument(
        "--device-memory",
        type=float,
        metavar="GB",
        help="memory of one device for the memory estimate (default: 80 for a GPU, 64 for an Ascend die)",
    )


def _model_settings(args) -> dict:
    from .layout import ModelConfigError, shape_from_config

    directory = getattr(args, "model_config", None)
    if directory:
        try:
            shape_from_config(os.path.abspath(directory))
        except ModelConfigError as err:
            raise UsageError(f"--model-config: {err}") from err
        directory = os.path.abspath(directory)
    memory = getattr(args, "device_memory", None)
    if memory is not None and not memory > 0:
        raise UsageError("--device-memory must be a positive number of GB")
    return {"model_config": directory, "device_memory": memory}


def parse_profiles(values) -> list[dict] | None:
    """`KEY=VAL[,KEY=VAL...]` per value. A value may hold commas when quoted (`KEY="a,b"`),
    and a piece without `=` continues the value before it (`KEY=a,b` is KEY set to `a,b`)."""
    if not values:
        return None
    out = []
    for value in values:
        if value.strip() == "current":
            out.append(CURRENT)
            continue
        env: dict = {}
        last = None
        for item in _split_profile(value):
            stripped = item.strip()
            if not stripped:
                continue
            key, eq, val = stripped.partition("=")
            if not eq and last is not None:
                env[last] += "," + _unquote(item)
                continue
            if not eq or not key or not key.replace("_", "a").isalnum() or key[0].isdigit():
                raise UsageError(f"--profile {value!r}: expected KEY=VAL[,KEY=VAL...]")
            env[key] = _unquote(val)
            last = key
        out.append(env)
    return out


def parse_stack(values, settings=None) -> dict:
    """--stack PKG=VERSION (repeatable) over [tool.validate-scripts] stack = {PKG = VERSION}."""
    from .target import PACKAGES

    out: dict[str, str] = {}
    if settings is not None:
        if not isinstance(settings, dict) or not all(isinstance(v, str) for v in settings.values()):
            raise UsageError("[tool.validate-scripts] stack: a table of package = version")
        items = [(k, v, "[tool.validate-scripts] stack") for k, v in settings.items()]
    else:
        items = []
    for value in values or []:
        key, eq, version = value.partition("=")
        if not eq or not version:
            raise UsageError(f"--stack {value!r}: expected PKG=VERSION")
        items.append((key.strip(), version.strip(), "--stack"))
    for key, version, where in items:
        if key not in PACKAGES:
            raise UsageError(f"{where} {key!r}: unknown package; one of {', '.join(PACKAGES)}")
        out[key] = version
    return out


def _split_profile(value: str) -> list[str]:
    """Split on commas outside single or double quotes."""
    parts, cur, quote = [], [], None
    for ch in value:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "render":
            return _render(argv[1:])
        return _validate(argv)
    except UsageError as err:
        print(f"validate-scripts: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # last line of defence: one line, never a traceback
        print(f"validate-scripts: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_USAGE


def _setup(args):
    from .discover import DiscoverError, discover
    from .hydra_stage.tree import ConfigCache, ConfigCaches, ConfigTreeError, locate
    from .validate import Options

    if args.max_profiles < 1:
        raise UsageError("--max-profiles must be at least 1")
    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        raise UsageError("-j/--jobs must be at least 1 (leave it out for the CPU count)")
    try:
        files = discover(args.paths, getattr(args, "excludes", ()))
    except DiscoverError as err:
        raise UsageError(str(err)) from err
    try:
        versions = getattr(args, "verl", None)
        if versions:
            from .releases import release_source

            source = release_source(versions[0])
        else:
            source = locate(args.verl_config)
    except ConfigTreeError as err:
        raise UsageError(str(err)) from err
    try:
        caches = ConfigCaches(ConfigCache(source, use_disk=not args.no_cache), explicit=source.origin != "installed")
    except OSError as err:
        raise UsageError(f"cannot read the verl config tree: {err}") from err
    pinned = parse_profiles(args.profile)
    current = bool(pinned) and CURRENT in pinned
    probed = devices = None
    if current:
        pinned = [p for p in pinned if p is not CURRENT] or None
        if pinned:
            raise UsageError("--profile current cannot be combined with other --profile values")
        from .machine import probe_device, probe_devices

        probed = probe_device()
        print(f"validate-scripts: --profile current: DEVICE={probed[0]} ({probed[1]})", file=sys.stderr)
        devices = probe_devices()
        print(f"validate-scripts: --profile current: {devices.describe()}", file=sys.stderr)
    schema = _schema(getattr(args, "schema", None))
    _check_severity_ids(args, schema)
    opts = Options(
        max_profiles=args.max_profiles,
        pinned=pinned,
        current=current,
        max_bytes=args.max_bytes,
        schema=schema,
        stack=parse_stack(getattr(args, "stack", None), getattr(args, "settings", {}).get("stack")),
        stdin=_stdin(files, args.max_bytes),
        probed_device=probed,
        device=_device(args),
        args=_script_args(args),
        devices=devices,
        **_model_settings(args),
    )
    return files, source, caches, opts


def _script_args(args) -> tuple | None:
    """--args 'WORDS': the scripts' positional arguments, split as the shell splits them."""
    import shlex

    text = getattr(args, "args", None)
    if text is None:
        return None
    try:
        return tuple(shlex.split(text))
    except ValueError as err:
        raise UsageError(f"--args {text!r}: {err}") from err


def _device(args) -> str | None:
    """--device, else [tool.validate-scripts] device, else None (each launch's own)."""
    device = getattr(args, "device", None) or getattr(args, "settings", {}).get("device")
    if device is not None and device not in ("gpu", "npu"):
        where = getattr(args, "severity_where", "[tool.validate-scripts]")
        raise UsageError(f"{where}: device: gpu or npu, not {device!r}")
    return device


def _say_entry_origin(source) -> None:
    """When the tree has no verl sources beside it, say where the entry points came from."""
    from .hydra_stage.tree import entry_origin

    origin = entry_origin(source)
    if not origin.startswith("verl sources at"):
        print(f"validate-scripts: verl entry points (module -> root config) from {origin}", file=sys.stderr)


def _stdin(files, max_bytes: int) -> bytes | None:
    """The script given as `-`, read once (workers get the bytes, not the stream)."""
    if "-" not in files:
        return None
    return sys.stdin.buffer.read(max_bytes + 1)


def _unread_profile_keys(results, pinned) -> list[str]:
    """Warnings for --profile keys that no checked script ever reads."""
    if not pinned or not results:
        return []
    out = []
    for key in dict.fromkeys(k for env in pinned for k in env):
        if not any(key in r.reads for r in results):
            where = results[0].path if len(results) == 1 else f"any of the {len(results)} scripts"
            out.append(f"warning: --profile {key}=...: {key} is never read by {where}; it changes nothing")
    return out


def _schema(path):
    """The policy schema: a user's file read and checked now (its mistakes are usage errors
    before anything runs); the shipped one when a script is first checked."""
    from .rules.schema import SchemaError, ShippedSchema, load_schema

    if path is None:
        return ShippedSchema()
    try:
        return load_schema(path)
    except SchemaError as err:
        raise UsageError(str(err)) from err


def _rule_docs(args) -> None:
    """--list-rules, --explain RULE: the rules' own documentation."""
    if args.list_rules:
        from .report.rule_docs import listing

        sys.stdout.write(listing())
        return
    from .report.rule_docs import explain, nearest

    text = explain(args.explain)
    if text is None:
        close = nearest(args.explain)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise UsageError(f"no rule {args.explain!r}{hint}; --list-rules lists them")
    sys.stdout.write(text)


def _validate(argv) -> int:
    args = _parser().parse_args(argv)
    if args.list_rules or args.explain:
        _rule_docs(args)
        return EXIT_OK
    _apply_settings(args)
    if args.verl and len(args.verl) > 1:
        if args.fix or args.diff:
            raise UsageError("--fix and --diff check against one verl release: give --verl once")
        return _matrix(args)
    if args.fix and "-" in args.paths:
        raise UsageError("--fix cannot rewrite standard input (-); --diff shows the changes")
    start = time.perf_counter()
    files, source, caches, opts = _setup(args)
    _say_entry_origin(source)
    from .result_cache import ResultCache

    results_cache = ResultCache(source, caches.main.digest, opts, use_disk=not args.no_cache)

    def check():
        results, unreadable = run_files(files, caches, opts, args.jobs or 0, results_cache)
        for r in results:
            r.findings = _reseverity(r.findings, args.severity)
        return results, unreadable

    results, unreadable = check()
    for line in _unread_profile_keys(results, opts.pinned):
        print(f"validate-scripts: {line}", file=sys.stderr)
    if args.diff:
        return _diff(results, unreadable, opts)
    fix_lines: list[str] = []
    if args.fix and not unreadable:
        results, unreadable, fix_lines, failed = _fix(results, check)
        if failed:
            unreadable = [*unreadable, *failed]
    findings = [f for r in results for f in r.findings]
    shown = _report(args, results, findings, source, time.perf_counter() - start, files, fix_lines)
    for line in fix_lines if not shown else []:
        print(line, file=sys.stderr)
    for line in unreadable:
        print(f"validate-scripts: {line}", file=sys.stderr)
    if unreadable:
        return EXIT_USAGE
    if any(f.severity == "error" for f in findings):
        return EXIT_FINDINGS
    if args.strict and any(f.severity == "warning" for f in findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _report(args, results, findings, source, seconds: float, files, fix_lines) -> bool:
    """The report in the chosen format on standard output; True when it holds the --fix lines
    (the text report does; the machine formats leave them to standard error)."""
    if args.format == "json":
        from .report import json_report

        sys.stdout.write(json_report.render(results, findings, source))
    elif args.format == "sarif":
        from .report import sarif

        sys.stdout.write(sarif.render(results, findings, source))
    elif args.format == "github":
        from .report import github

        sys.stdout.write(github.render(results, findings))
    else:
        from .report import text

        empty = _empty_folders(args.paths, files)
        color = _use_color(args.color)
        sys.stdout.write(text.render(results, findings, seconds, args.quiet, color, empty, fix_lines))
        return True
    return False


MAX_FIX_PASSES = 10  # a fix can make another possible (a renamed key whose value is then fixed)


def _fix(results, check):
    """--fix: write the plan's changes, check again, repeat until nothing changes (ruff's loop).
    (results, unreadable, report lines, write failures): the results are those of the fixed files."""
    from . import fix
    from .report.text import counted

    fixed, changed, failed, unreadable = 0, set(), [], []
    for _ in range(MAX_FIX_PASSES):
        plan = fix.plan(results)
        made, problems = fix.changes(plan, _digests(results))
        failed += problems
        written = set()
        for path, (_, new) in made.items():
            try:
                fix.write(path, new)
            except OSError as err:
                failed.append(f"{path}: cannot write: {err.strerror or err}")
                continue
            changed.add(path)
            written.update(plan.edits[path])
        count = sum(1 for f in plan.fixed if f.fix.edit in written)
        if not count:
            break
        fixed += count
        results, unreadable = check()
    lines = _refusals(fix.plan(results))
    lines.append(f"fixed {counted(fixed, 'finding')} in {counted(len(changed), 'file')}")
    return results, unreadable, lines, failed


def _diff(results, unreadable, opts) -> int:
    """--diff: the changes one pass of --fix would make, as a unified diff on standard output;
    what it would fix and what it refuses on standard error. Exit 1 when there is a change."""
    from . import fix
    from .report.text import counted

    plan = fix.plan(results)
    made, problems = fix.changes(plan, _digests(results), opts.stdin)
    for path in sorted(made):
        sys.stdout.write(fix.unified_diff(path, *made[path]))
    sys.stdout.flush()  # the diff, then the summary: in this order on a terminal too
    for line in [*_refusals(plan), *problems, *unreadable]:
        print(line, file=sys.stderr)
    count = sum(1 for f in plan.fixed if f.fix.edit.path in made)
    print(f"would fix {counted(count, 'finding')} in {counted(len(made), 'file')}", file=sys.stderr)
    if unreadable:
        return EXIT_USAGE
    return EXIT_FINDINGS if made else EXIT_OK


def _refusals(plan) -> list[str]:
    """A note for each fixable finding whose fix is not applied, and why."""
    return [f"{f.path}:{f.line}:{f.column}: note: not fixed [{f.rule}]: {why}" for f, why in plan.refused]


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
            top = os.path.join(os.path.normpath(p), "")
            if not any(os.path.normpath(f).startswith(top) for f in files):
                out.append(p)
    return out


def _apply_settings(args) -> None:
    """`[tool.validate-scripts]` from pyproject.toml fills what the command line left unset.
    An unknown key, or a severity for a rule id no rule has, exits 2 naming the file and key."""
    import difflib

    from .settings import FILE, KEYS, project_settings, unknown_keys

    settings = project_settings()
    args.settings = settings
    where = f"[tool.validate-scripts] in {settings.get(FILE)}"
    for key in unknown_keys(settings):
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
    if args.schema is None:
        args.schema = settings.get("schema")
    args.excludes = list(settings.get("exclude", []))
    severity = settings.get("severity", {})
    if not isinstance(severity, dict) or not all(v in ("error", "warning", "info", "off") for v in severity.values()):
        raise UsageError(f"{where}: severity: map rule ids to error, warning, info or off")
    args.severity = severity
    args.severity_where = where


def _check_severity_ids(args, schema) -> None:
    """Every rule id in the severity table names a rule (shipped, or a policy of the schema)."""
    import difflib

    from .rules import registry

    severity = getattr(args, "severity", {}) or {}
    if not severity:
        return
    known = set(registry()) | {p.id for p in getattr(schema, "policies", ())}
    for rid in severity:
        if rid not in known:
            close = difflib.get_close_matches(rid, sorted(known), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(f"{args.severity_where}: severity: no rule {rid!r}{hint}; --list-rules lists them")


def _reseverity(findings, severity: dict) -> list:
    from dataclasses import replace

    out = []
    for f in findings:
        level = severity.get(f.rule)
        if level == "off":
            continue
        out.append(replace(f, severity=level) if level else f)
    return out


def _matrix(args) -> int:
    """One run per verl release, every output option honoured: a table of which scripts
    compose on which release and the findings (text), one report per release (json), one
    SARIF run per release, or the annotations with the releases they hold on (github)."""
    versions = list(dict.fromkeys(args.verl))
    table: dict[str, dict[str, str]] = {}
    reports, by_version = [], {}
    from .report import matrix

    for version in versions:
        args.verl = [version]
        files, source, caches, opts = _setup(args)
        results, unreadable = run_files(files, caches, opts, args.jobs or 0)
        for line in unreadable:
            print(f"validate-scripts: {line}", file=sys.stderr)
        if unreadable:
            return EXIT_USAGE
        for r in results:
            r.findings = _reseverity(r.findings, args.severity)
            table.setdefault(r.path, {})[version] = matrix.cell(r.findings)
        findings = [f for r in results for f in r.findings]
        reports.append((results, findings, source))
        by_version[version] = findings
    if args.format == "json":
        import json

        from .report import json_report

        docs = [json_report.document(*rep) for rep in reports]
        out = {"version": 1, "matrix": [{"verl": v, **d} for v, d in zip(versions, docs, strict=True)]}
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    elif args.format == "sarif":
        from .report import sarif

        sys.stdout.write(sarif.render_runs(reports))
    elif args.format == "github":
        from dataclasses import replace

        from .report import github

        differ, common = matrix.split_findings(versions, by_version)
        tagged = [replace(f, message=f"{f.message} (only verl {', '.join(vs)})") for f, vs in differ]
        sys.stdout.write(github.render([], sorted(tagged + common, key=lambda f: f.sort_key())))
    else:
        sys.stdout.write(matrix.render(versions, table, by_version, args.quiet, _use_color(args.color)))
    every = [f for fs in by_version.values() for f in fs]
    if any(f.severity == "error" for f in every):
        return EXIT_FINDINGS
    if args.strict and any(f.severity == "warning" for f in every):
        return EXIT_FINDINGS
    return EXIT_OK


def _use_color(choice: str) -> bool:

    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def _render(argv) -> int:
    p = argparse.ArgumentParser(
        prog="validate-scripts render", description="Print each profile's launch command, one override a line."
    )
    p.add_argument("scripts", nargs="+", metavar="SCRIPT", help="script files or folders; - reads standard input")
    p.add_argument("--verl-config", metavar="DIR")
    p.add_argument("--verl", metavar="VERSION", action="append")
    p.add_argument("--profile", action="append", metavar="KEY=VAL[,KEY=VAL...]")
    p.add_argument("--max-profiles", type=int, default=64)
    p.add_argument("--no-cache", action="store_true")
    _device_option(p)
    _args_option(p)
    _model_options(p)
    p.add_argument(
        "--as",
        dest="as_",
        choices=["command", "overrides", "config"],
        default="command",
        help="the launch command, the overrides alone, or the config changes as YAML",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    args = p.parse_args(argv)
    args.paths = list(args.scripts)
    args.max_bytes = 5 * 1024 * 1024
    args.schema = None
    args.excludes = []
    files, source, caches, opts = _setup(args)
    results, unreadable = run_files(files, caches, opts)
    for line in unreadable:
        print(f"validate-scripts: {line}", file=sys.stderr)
    if unreadable:
        return EXIT_USAGE
    from .report.render import render, render_json

    if args.format == "json":
        sys.stdout.write(render_json(results, caches, args.as_))
    else:
        sys.stdout.write(render(results, caches, args.as_, opts))
    return EXIT_OK
