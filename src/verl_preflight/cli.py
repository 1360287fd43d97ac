"""Command line: arguments, exit codes (0 clean, 1 errors, 2 could not run), never a traceback."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

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
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument("--quiet", "-q", action="store_true", help="findings only, no summary or info")
    p.add_argument("--schema", metavar="FILE", help="policy schema (YAML) instead of the shipped one")
    p.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour the severities (auto: on a terminal, unless NO_COLOR is set)",
    )
    return p


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
    )
    return files, source, cache, opts


def _schema(path):
    from .checks.rules.schema import SchemaError, load_schema

    try:
        return load_schema(path)
    except SchemaError as err:
        raise UsageError(str(err)) from err


SERIAL_BELOW = 8  # fewer scripts than this: worker start-up costs more than it saves


def _run_all(files, cache, opts, jobs: int = 1):
    from . import parallel

    if jobs <= 0:
        jobs = os.cpu_count() or 1
    if jobs > 1 and len(files) >= SERIAL_BELOW:
        outcomes = parallel.run(files, cache, opts, jobs, _run_one)
    else:
        outcomes = [_run_one(path, cache, opts) for path in files]
    results = [r for r, _ in outcomes if r is not None]
    unreadable = [e for _, e in outcomes if e is not None]
    cache.save()
    return results, unreadable


def _run_one(path, cache, opts):
    """(result, None) or (None, read error); never raises."""
    from .validate import ReadError, validate_script

    try:
        return validate_script(path, cache, opts), None
    except ReadError as err:
        return None, str(err)
    except RecursionError:
        return _failed(path, "the script nests too deeply to follow"), None
    except Exception as err:  # a bug of ours: report it on this script and go on
        return _failed(path, f"internal error: {type(err).__name__}: {err}"), None


def _failed(path: str, why: str):
    from .findings import Finding
    from .validate import ScriptResult

    return ScriptResult(path, findings=[Finding(path, 1, 1, "internal-error", "error", f"not checked: {why}")])


def _validate(argv) -> int:
    args = _parser().parse_args(argv)
    if args.explain:
        from .rules import explain

        text = explain(args.explain)
        if text is None:
            raise UsageError(f"no rule {args.explain!r}")
        sys.stdout.write(text)
        return EXIT_OK

    _apply_settings(args)
    if args.verl and len(args.verl) > 1:
        return _matrix(args)
    start = time.perf_counter()
    files, source, cache, opts = _setup(args)
    results, unreadable = _run_all(files, cache, opts, args.jobs)
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
        results, unreadable = _run_all(files, cache, opts)
        if unreadable:
            raise UsageError(unreadable[0])
        for r in results:
            errors = sum(1 for f in r.findings if f.severity == "error")
            failed |= errors > 0
            table.setdefault(r.path, {})[version] = "ok" if not errors else f"{errors} error{'s' * (errors > 1)}"
    width = max([len("script")] + [len(p) for p in table])
    heads = [f"verl {v}" for v in versions]

    def row_text(first, cells):
        return "  ".join([first.ljust(width)] + [c.ljust(len(h)) for c, h in zip(cells, heads, strict=True)])

    out = [row_text("script", heads)]
    for path, row in table.items():
        out.append(row_text(path, [row.get(v, "-") for v in versions]))
    sys.stdout.write("\n".join(line.rstrip() for line in out) + "\n")
    return EXIT_FINDINGS if failed else EXIT_OK


def _use_color(choice: str) -> bool:
    import os

    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def shell_word(field) -> str:
    """A field as one shell word: known text quoted, unknown pieces left to the shell
    that will run it (`"${HOME}"`, `"$(...)"`)."""
    parts = []
    for piece in field.pieces:
        parts.append(shlex.quote(piece) if isinstance(piece, str) else f'"{piece.text}"')
    return "".join(parts) or "''"


def config_changes(cache, la) -> str:
    """The composed config's values that differ from verl's defaults for the same config-group
    selections, as YAML (real hydra.compose)."""
    import yaml
    from omegaconf import OmegaConf

    from .checks.config import is_group_selection
    from .verl_config import compose_raw

    if la.config_name is None:
        return f"# {la.module}: not a Hydra entry point of this verl"
    texts = [o.checkable for o in la.spec.overrides if o.checkable is not None]
    groups = set(cache.groups or ())
    selections = [t for t, rec in zip(texts, cache.parse(texts), strict=True) if is_group_selection(rec, groups)]
    try:
        base = OmegaConf.to_container(compose_raw(cache.source.path, la.config_name, selections), resolve=False)
        mine = OmegaConf.to_container(compose_raw(cache.source.path, la.config_name, texts), resolve=False)
    except Exception as err:  # Hydra refuses the overrides: say so, as validate would
        return f"# does not compose: {str(err).splitlines()[0]}"
    base.pop("hydra", None)
    mine.pop("hydra", None)
    changed = _diff(base, mine)
    if not changed:
        return "{}"
    from .launches import UNKNOWN_STANDIN

    text = yaml.safe_dump(changed, sort_keys=False, default_flow_style=False).rstrip()
    return text.replace(UNKNOWN_STANDIN, "<unknown>")


def _diff(base, mine):
    if isinstance(base, dict) and isinstance(mine, dict):
        out = {}
        for key, value in mine.items():
            if key not in base:
                out[key] = value
            elif base[key] != value:
                out[key] = _diff(base[key], value)
        return out
    return mine


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
    results, unreadable = _run_all(files, cache, opts)
    for line in unreadable:
        print(f"validate-scripts: {line}", file=sys.stderr)
    if unreadable:
        return EXIT_USAGE
    out = []
    for r in results:
        for prof in r.profiles:
            env = " ".join(f"{k}={v}" for k, v in prof.env.items()) or "default"
            out.append(f"# {r.path} [{env}]: {prof.status}")
            for la in prof.launches:
                if args.as_ == "overrides":
                    out.extend(shell_word(o.field) for o in la.spec.overrides)
                    continue
                if args.as_ == "config":
                    out.append(config_changes(cache, la))
                    continue
                out.append(f"python3 -m {la.module} \\")
                args_list = []
                if la.spec is not None and la.spec.config_name:
                    args_list.append(shlex.quote(f"--config-name={la.spec.config_name}"))
                args_list += [shell_word(o.field) for o in la.spec.overrides]
                for i, o in enumerate(args_list):
                    tail = " \\" if i + 1 < len(args_list) else ""
                    out.append(f"    {o}{tail}")
            out.append("")
    sys.stdout.write("\n".join(out))
    return EXIT_OK
