"""Command line: arguments, exit codes (0 clean, 1 errors, 2 could not run), never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
import time

from .runner import run_files

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


CURRENT = {"__current__": "1"}  # --profile current: this machine's environment


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="validate-scripts",
        description="Check verl launch scripts statically: what bash hands verl in every profile, "
        "checked with Hydra's own semantics. `validate-scripts render SCRIPT` prints the launches.",
    )
    p.add_argument("paths", nargs="*", help="script files or folders (every *.sh below)")
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
        help="check only this environment (repeatable); others are unset",
    )
    p.add_argument("--max-profiles", type=int, default=64)
    p.add_argument("--max-bytes", type=int, default=5 * 1024 * 1024)
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="worker processes (default: the CPU count; output is the same for any N)",
    )
    p.add_argument("--strict", action="store_true", help="warnings also fail (exit 1)")
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
        help="colour the severities (auto: on a terminal, unless NO_COLOR is set)",
    )
    return p


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
    if not values:
        return None
    out = []
    for value in values:
        if value.strip() == "current":
            out.append(CURRENT)
            continue
        env = {}
        for item in value.split(","):
            item = item.strip()
            if not item:
                continue
            key, eq, val = item.partition("=")
            if not eq or not key.replace("_", "a").isalnum():
                raise UsageError(f"--profile {value!r}: expected KEY=VAL[,KEY=VAL...]")
            env[key] = val
        out.append(env)
    return out


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
    from .validate import Options
    from .verl_config import ConfigCache, ConfigTreeError, locate

    if args.max_profiles < 1:
        raise UsageError("--max-profiles must be at least 1")
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
        cache = ConfigCache(source, use_disk=not args.no_cache)
    except OSError as err:
        raise UsageError(f"cannot read the verl config tree: {err}") from err
    pinned = parse_profiles(args.profile)
    current = bool(pinned) and CURRENT in pinned
    if current:
        pinned = [p for p in pinned if p is not CURRENT] or None
        if pinned:
            raise UsageError("--profile current cannot be combined with other --profile values")
    opts = Options(
        max_profiles=args.max_profiles,
        pinned=pinned,
        current=current,
        max_bytes=args.max_bytes,
        schema=_schema(getattr(args, "schema", None)),
        **_model_settings(args),
    )
    return files, source, cache, opts


def _schema(path):
    from .rules.schema import SchemaError, load_schema

    try:
        return load_schema(path)
    except SchemaError as err:
        raise UsageError(str(err)) from err


def _validate(argv) -> int:
    args = _parser().parse_args(argv)
    if args.list_rules:
        from .report.rule_docs import listing

        sys.stdout.write(listing())
        return EXIT_OK
    if args.explain:
        from .report.rule_docs import explain, nearest

        text = explain(args.explain)
        if text is None:
            close = nearest(args.explain)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            raise UsageError(f"no rule {args.explain!r}{hint}; --list-rules lists them")
        sys.stdout.write(text)
        return EXIT_OK

    _apply_settings(args)
    if args.verl and len(args.verl) > 1:
        return _matrix(args)
    start = time.perf_counter()
    files, source, cache, opts = _setup(args)
    results, unreadable = run_files(files, cache, opts, args.jobs)
    for r in results:
        r.findings = _reseverity(r.findings, args.severity)
    findings = [f for r in results for f in r.findings]
    seconds = time.perf_counter() - start
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

        sys.stdout.write(text.render(results, findings, seconds, args.quiet, _use_color(args.color)))
    for line in unreadable:
        print(f"validate-scripts: {line}", file=sys.stderr)
    if unreadable:
        return EXIT_USAGE
    if any(f.severity == "error" for f in findings):
        return EXIT_FINDINGS
    if args.strict and any(f.severity == "warning" for f in findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _apply_settings(args) -> None:
    """`[tool.validate-scripts]` from pyproject.toml fills what the command line left unset."""
    from .settings import project_settings

    settings = project_settings()
    args.settings = settings
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
        raise UsageError("[tool.validate-scripts] severity: map rule ids to error, warning, info or off")
    args.severity = severity


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
    """One run per verl release; a table of which scripts compose on which."""
    versions = list(dict.fromkeys(args.verl))
    table: dict[str, dict[str, str]] = {}
    failed = False
    for version in versions:
        args.verl = [version]
        files, source, cache, opts = _setup(args)
        results, unreadable = run_files(files, cache, opts)
        if unreadable:
            raise UsageError(unreadable[0])
        for r in results:
            errors = sum(1 for f in r.findings if f.severity == "error")
            failed |= errors > 0
            table.setdefault(r.path, {})[version] = "ok" if not errors else f"{errors} error{'s' * (errors > 1)}"
    from .report import matrix

    sys.stdout.write(matrix.render(versions, table))
    return EXIT_FINDINGS if failed else EXIT_OK


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
    p.add_argument("script")
    p.add_argument("--verl-config", metavar="DIR")
    p.add_argument("--verl", metavar="VERSION", action="append")
    p.add_argument("--profile", action="append", metavar="KEY=VAL[,KEY=VAL...]")
    p.add_argument("--max-profiles", type=int, default=64)
    p.add_argument("--no-cache", action="store_true")
    _model_options(p)
    p.add_argument(
        "--as",
        dest="as_",
        choices=["command", "overrides", "config"],
        default="command",
        help="the launch command, the overrides alone, or the config changes as YAML",
    )
    args = p.parse_args(argv)
    args.paths = [args.script]
    args.max_bytes = 5 * 1024 * 1024
    args.schema = None
    args.excludes = []
    files, source, cache, opts = _setup(args)
    results, unreadable = run_files(files, cache, opts)
    for line in unreadable:
        print(f"validate-scripts: {line}", file=sys.stderr)
    if unreadable:
        return EXIT_USAGE
    from .report.render import render

    sys.stdout.write(render(results, cache, args.as_, opts))
    return EXIT_OK
