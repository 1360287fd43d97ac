"""Command line: the arguments, parsed and checked; what they ask is done by application.py.

Exit codes: 0 clean, 1 errors (or warnings with --strict), 2 could not run; never a traceback.
"""

from __future__ import annotations

import argparse
import copy
import functools
import os
import sys

from .. import __version__
from .application import EXIT_USAGE, ProfileChoice, UsageError

__all__ = ["UsageError", "main", "parse_profiles", "parse_stack"]


def main(argv=None) -> int:
    from ..report import console
    from ..store import file_digests
    from . import application

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "render":
            status = application.render(_render_args(argv[1:]))
            file_digests.save()
            return status
        if argv and argv[0] == "lsp":
            from . import lsp

            return lsp.serve(functools.partial(lsp_check_args, _lsp_args(argv[1:])))
        preflight = bool(argv) and argv[0] == "preflight"
        args = (_preflight_parser() if preflight else _parser()).parse_args(argv[1:] if preflight else argv)
        if preflight:
            _preflight_args(args)
        if args.list_rules or args.explain:
            application.rule_docs(args)
            return application.EXIT_OK
        if args.show_traceback:  # (an environment variable: -j workers inherit it)
            from .runner import TRACEBACK

            os.environ[TRACEBACK] = "1"
        given = argparse.Namespace(**vars(args))  # (before the settings: each project's apply to its own scripts)
        application.apply_settings(args)
        _typed(args, args.settings.get("stack"))
        if getattr(args, "show_settings", False):
            status = application.show_settings(args)
        elif preflight:
            status = application.preflight(args)
        elif args.verl and len(args.verl) > 1:
            status = application.matrix(args)
        else:
            groups = application.settings_groups(args)
            if len(groups) > 1:  # scripts of projects with settings of their own: each checked with its own
                status = application.validate_groups(given, groups, lambda a: _typed(a, a.settings.get("stack")))
            else:
                status = application.validate(args, argv)
        file_digests.save()
        return status
    except UsageError as err:
        console.say(str(err))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # last line of defence: one line, never a traceback
        console.internal_error(err)
        return EXIT_USAGE


def _typed(args, stack_settings=None) -> None:
    """The options that are more than strings, parsed once: --profile, --stack, --args."""
    args.profile = parse_profiles(args.profile)
    args.stack = parse_stack(getattr(args, "stack", None), stack_settings)
    args.script_args = _script_args(getattr(args, "args", None))


def _script_args(text) -> tuple | None:
    """--args 'WORDS': the scripts' positional arguments, split as the shell splits them."""
    import shlex

    if text is None:
        return None
    try:
        return tuple(shlex.split(text))
    except ValueError as err:
        raise UsageError(f"--args {text!r}: {err}") from err


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="validate-scripts",
        description="Check verl launch scripts statically: what bash hands verl in every profile, "
        "checked with Hydra's own semantics.",
        epilog="`validate-scripts render SCRIPT...` prints what each profile hands verl "
        "(`validate-scripts render --help`); `validate-scripts lsp` is the language server for an editor "
        "(`validate-scripts lsp --help`). `--profile current` checks the one profile this machine "
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
        "pip download --no-deps), or git:COMMIT, a commit of verl's repository (fetched once with git); "
        "repeat for a compatibility matrix",
    )
    p.add_argument(
        "--python",
        metavar="PATH",
        help="the interpreter the launches run with: the verl it would import (asked with importlib's find_spec, "
        "never imported) is the installed one, before what the repository's setup says",
    )
    p.add_argument("--format", choices=["text", "json", "sarif", "github"], default="text")
    p.add_argument(
        "--show-settings",
        action="store_true",
        help="print the [tool.validate-scripts] settings each script given is checked with, and from where",
    )
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
        "(repeatable; PKG: verl, megatron-core, megatron-bridge, mbridge, mindspeed, mindspeed-bridge, vllm)",
    )
    _device_option(p)
    _args_option(p)
    _limit_options(p)
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="worker processes, at least 1 (default: the CPU count; output is the same for any N)",
    )
    p.add_argument("--strict", action="store_true", help="warnings also fail (exit 1)")
    p.add_argument(
        "--dependents",
        action="store_true",
        help="also check the scripts of the repository that source or run a file given (an edit to a "
        "helper such as common.sh re-checks the launches that read it; pre-commit's hook passes it)",
    )
    p.add_argument(
        "--enable",
        action="append",
        metavar="RULE",
        help="report an opt-in rule (a lint of style, off by default; --list-rules marks them), repeatable",
    )
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
    p.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff: also the fixes that hold but that another finding of the run touches "
        "(the report names them and why)",
    )
    p.add_argument("--explain", metavar="RULE", help="print a rule's documentation")
    p.add_argument("--list-rules", action="store_true", help="list every rule with its severity")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument(
        "--show-traceback",
        action="store_true",
        help="with an internal error of the tool, print where in its code it happened (for a bug report)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="findings only, no summary or info")
    p.add_argument(
        "--show-secrets",
        action="store_true",
        help="print the values of variables named like secrets (*TOKEN*, *SECRET*, *KEY*, *PASSWORD*, *_PAT) "
        "instead of ***",
    )
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


MAX_BYTES_CEILING = 1 << 30  # 1 GiB: a launch script is never near it; more would be read at once


def _count(low: int, high: int):
    """An argparse type: a whole number from `low` to `high` (a bad one exits 2 with the range)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside {low}..{high}")
        return value

    parse.__name__ = "count"
    return parse


def _limit_options(p, max_bytes: bool = True) -> None:
    p.add_argument("--max-profiles", type=_count(1, 4096), default=64, help="at most this many profiles a script, 1..4096")
    if max_bytes:
        p.add_argument("--max-bytes", type=_count(1, MAX_BYTES_CEILING), default=5 * 1024 * 1024,
                       help="largest script read, in bytes, 1..1 GiB")


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
        'Ascend\'s environment, ...; unknown where nothing says: docs/checks.md, "The target")',
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


def parse_profiles(values) -> ProfileChoice:
    """--profile: `current` (this machine's environment), or `KEY=VAL[,KEY=VAL...]` per value.
    A value may hold commas when quoted (`KEY="a,b"`), and a piece without `=` continues the
    value before it (`KEY=a,b` is KEY set to `a,b`)."""
    if not values:
        return ProfileChoice()
    if any(v.strip() == "current" for v in values):
        if len(values) > 1:
            raise UsageError("--profile current cannot be combined with other --profile values")
        return ProfileChoice(current=True)
    out = []
    for value in values:
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
    return ProfileChoice(pinned=tuple(out))


def parse_stack(values, settings=None) -> dict:
    """--stack PKG=VERSION (repeatable) over [tool.validate-scripts] stack = {PKG = VERSION}."""
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
    if items:
        from ..target.launch_target import PACKAGES
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


def _preflight_parser() -> argparse.ArgumentParser:
    """`preflight --ray-address ADDRESS SCRIPT...`: the check's options, and the cluster's."""
    p = _parser()
    p.prog = "validate-scripts preflight"
    p.description = (
        "Check launch scripts on the head node against the running Ray cluster the job will meet: each "
        "alive node is asked (one small task, no GPU or NPU claimed) for its devices, memory, package versions, "
        "environment and the paths the launch names; the script is never run. This machine's environment is "
        "the profile (as --profile current)."
    )
    p.epilog = "Exit status: 0 no error, 1 errors (or warnings with --strict), 2 could not run or no cluster to ask."
    p.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="the running cluster's address, as `ray start --head` printed it (HOST:PORT); default: RAY_ADDRESS",
    )
    p.add_argument(
        "--probe-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long every node has to answer one round of questions (default 30)",
    )
    return p


def _preflight_args(args) -> None:
    """The cluster's address (else RAY_ADDRESS), and what a preflight always is: this machine's
    profile, no cache (the cluster is an input), one process (one connection to the cluster)."""
    from ..target.cluster import PROBE_TIMEOUT, address_of

    args.ray_address = address_of(args.ray_address)
    if not args.ray_address:
        raise UsageError("preflight needs the cluster's address: --ray-address HOST:PORT, or RAY_ADDRESS")
    if args.probe_timeout is None:
        args.probe_timeout = PROBE_TIMEOUT
    if not args.probe_timeout > 0:
        raise UsageError("--probe-timeout must be more than 0 seconds")
    if args.profile and args.profile != ["current"]:
        raise UsageError("preflight checks this machine's profile (as --profile current): leave --profile out")
    if args.fix or args.diff:
        raise UsageError("preflight reports; --fix and --diff go with a check (validate-scripts SCRIPT)")
    if args.verl and len(args.verl) > 1:
        raise UsageError("preflight checks against one verl: the cluster's (give --verl once, or leave it out)")
    args.profile = ["current"]
    args.no_cache = True
    args.jobs = 1


def _render_args(argv):
    p = argparse.ArgumentParser(
        prog="validate-scripts render", description="Print each profile's launch command, one override a line."
    )
    p.add_argument("scripts", nargs="+", metavar="SCRIPT", help="script files or folders; - reads standard input")
    p.add_argument("--verl-config", metavar="DIR")
    p.add_argument("--verl", metavar="VERSION", action="append")
    p.add_argument("--profile", action="append", metavar="KEY=VAL[,KEY=VAL...]")
    _limit_options(p, max_bytes=False)
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
    p.add_argument("--show-secrets", action="store_true", help="print secret-named variables' values, not ***")
    args = p.parse_args(argv)
    args.paths = list(args.scripts)
    args.max_bytes = 5 * 1024 * 1024
    args.schema = None
    args.excludes = []
    _typed(args)
    return args


def _lsp_args(argv):
    """`lsp [OPTIONS]`: the options every check of the language server is made with."""
    p = argparse.ArgumentParser(
        prog="validate-scripts lsp",
        description="The language server: speaks LSP on standard input and output, publishes the findings of each "
        "open shell script as diagnostics, offers the --fix edits as quick fixes, shows on hover over an override "
        "what each profile hands verl. The project's [tool.validate-scripts] settings apply as for a check from "
        "the workspace folder.",
    )
    p.add_argument("--verl-config", metavar="DIR", help="verl's trainer/config folder")
    p.add_argument("--verl", metavar="VERSION", action="append", help="check against this verl release's config")
    p.add_argument("--profile", action="append", metavar="KEY=VAL[,KEY=VAL...]")
    p.add_argument("--stack", action="append", metavar="PKG=VERSION")
    _device_option(p)
    _args_option(p)
    _limit_options(p)
    p.add_argument("--schema", metavar="FILE", help="policy schema (YAML) instead of the shipped one")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument(
        "--show-traceback",
        action="store_true",
        help="with an internal error of the tool, print where in its code it happened (for a bug report)",
    )
    _model_options(p)
    args = p.parse_args(argv)
    args.jobs = 1
    return args


def lsp_check_args(given, path: str):
    """The options of the language server's check of one script (`-`: a buffer with no file), from
    the working directory: those given after `lsp`, then [tool.validate-scripts] as for a check."""
    from . import application

    args = copy.copy(given)
    args.paths = [path]
    application.apply_settings(args)
    _typed(args, args.settings.get("stack"))
    return args
