"""The pipeline: script -> parse -> profiles -> evaluate -> launches -> checks -> findings."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

from .checks import suppressions
from .checks.config import check_overrides, is_group_selection
from .checks.rules import run_launch_rules, run_script_rules
from .checks.rules.view import LaunchView, Setting
from .findings import Finding, merge_findings
from .launches import LaunchSpec, find_entry, read_launch
from .shell import profiles as prof
from .shell.evaluate import Budget, evaluate
from .shell.parse import parse_script, syntax_findings
from .verl_config import ConfigCache, entry_config_name

DEFAULT_MAX_BYTES = 5 * 1024 * 1024


@dataclass
class Options:
    max_profiles: int = 64
    pinned: list | None = None  # list of env dicts from --profile
    max_bytes: int = DEFAULT_MAX_BYTES
    budget: Budget = field(default_factory=Budget)
    ambient: dict | None = None  # tests: the complete environment
    schema: object = None  # checks.rules.schema.Schema; None: no policy rules
    current: bool = False  # --profile current: this machine's environment
    _once: set = field(default_factory=set)

    def once(self, key: str) -> bool:
        """True the first time `key` is asked for in this run."""
        if key in self._once:
            return False
        self._once.add(key)
        return True


class ScriptContext:
    """What script-level rules see: the parsed files and the launch sites reached."""

    def __init__(self, script, parsed: dict, launches: list):
        self.main_script = script
        self._parsed = parsed
        self._launches = launches

    def scripts(self):
        return [self.main_script, *self._parsed.values()]

    def launch_sites(self):
        seen, out = set(), []
        for la in self._launches:
            key = (la.loc.path, la.loc.line, la.loc.col)
            if key not in seen:
                seen.add(key)
                out.append(la)
        return out


@dataclass
class LaunchResult:
    line: int
    module: str
    config_name: str | None
    overrides: list
    spec: LaunchSpec | None = None


@dataclass
class ProfileResult:
    env: dict
    status: str
    launches: list


@dataclass
class ScriptResult:
    path: str
    profiles: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    fatal: str | None = None


class ReadError(Exception):
    pass


def read_script(path: str, max_bytes: int) -> bytes | None:
    """The file's bytes; None when it is larger than max_bytes."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ReadError(f"{path}: cannot read: not a regular file")
        if info.st_size > max_bytes:
            return None
        with open(path, "rb") as fh:
            return fh.read(max_bytes + 1)
    except OSError as err:
        raise ReadError(f"{path}: cannot read: {err.strerror or err}") from err


def validate_script(path: str, cache: ConfigCache | None, opts: Options) -> ScriptResult:
    result = ScriptResult(path)
    data = read_script(path, opts.max_bytes)
    if data is None:
        result.findings.append(
            Finding(
                path,
                1,
                1,
                "file-too-large",
                "error",
                f"larger than {opts.max_bytes} bytes: not checked (raise --max-bytes)",
            )
        )
        return result
    script = parse_script(path, data)
    findings = list(syntax_findings(script))
    info = prof.scan(script)
    unset = prof.unset_inputs(info)
    ambient = opts.ambient
    if opts.current:
        envs, ambient = [current_env(prof.dimensions(info))], dict(os.environ)
    elif opts.pinned:
        envs = [dict(p) for p in opts.pinned]
        unset |= {k for p in envs for k in p}
    else:
        dims = prof.dimensions(info)
        envs, total = prof.enumerate_profiles(dims, opts.max_profiles)
        if total > len(envs):
            findings.append(
                Finding(
                    path,
                    1,
                    1,
                    "profiles-capped",
                    "warning",
                    f"{total} profiles, only the first {len(envs)} were checked (--max-profiles)",
                )
            )
    all_launches = []
    parsed: dict = {}
    evaluated = [evaluate(script, env, unset, find_entry, ambient=ambient, budget=opts.budget, parsed=parsed)
                 for env in envs]  # fmt: skip
    for outcomes in prof.collapse(evaluated):  # profiles that launch the same thing are one
        for outcome in outcomes:
            label = outcome.label
            launches = []
            for n in outcome.notes:
                findings.append(n.in_profile(label))
            for launch in outcome.launches:
                all_launches.append(launch)
                spec = read_launch(launch)
                config_name = _config_name(spec, cache)
                launches.append(
                    LaunchResult(
                        spec.loc.line, spec.module, config_name, [o.field.display for o in spec.overrides], spec
                    )
                )
                for p in spec.problems:
                    findings.append(p.in_profile(label))
                if cache is not None:
                    problems = check_launch(spec, config_name, cache)
                    findings.extend(f.in_profile(label) for f in problems)
                    if opts.schema is not None:
                        view = launch_view(spec, config_name, label, cache)
                        if view is not None:
                            findings.extend(f.in_profile(label) for f in run_launch_rules(opts.schema, view, opts))
            result.profiles.append(ProfileResult(label, outcome.status, launches))
    if opts.schema is not None:
        findings.extend(run_script_rules(opts.schema, ScriptContext(script, parsed, all_launches)))
    sources = {path: data.decode("utf-8", "replace")}
    sources.update({p: s.source.decode("utf-8", "replace") for p, s in parsed.items()})
    result.findings = merge_findings(suppressions.apply(findings, sources))
    return result


def launch_view(spec: LaunchSpec, config_name: str | None, label: dict, cache: ConfigCache):
    """The launch's settings over verl's composed defaults, for the policy rules."""
    if config_name is None or spec.config_path not in (None, "config", "./config", "config/"):
        return None
    items = [(o, o.checkable) for o in spec.overrides if o.checkable is not None]
    records = cache.parse([t for _, t in items])
    groups = set(cache.groups or ())
    group_lines, settings = [], []
    for (o, text), rec in zip(items, records, strict=True):
        if not rec["ok"] or rec["sweep"]:
            return None
        if is_group_selection(rec, groups):
            group_lines.append(text)
            continue
        display = o.field.display.split("=", 1)[-1]
        settings.append(Setting(rec["key"], rec["value"], o.field.known, o.loc, rec["kind"], text, display))
    snap = cache.snapshot(config_name, tuple(group_lines))
    if "tree" not in snap:
        return None
    return LaunchView(spec, config_name, label, settings, snap["tree"])


def current_env(dims) -> dict:
    """The one profile this machine will run: its environment, DEVICE probed like the scripts do."""
    import importlib.util

    env = {}
    for d in dims:
        if d.name in os.environ:
            env[d.name] = os.environ[d.name]
        elif d.name == "DEVICE":
            try:
                npu = importlib.util.find_spec("torch_npu") is not None
            except (ImportError, ValueError):
                npu = False
            env["DEVICE"] = "npu" if npu else "gpu"
    return env


def _config_name(spec: LaunchSpec, cache: ConfigCache | None) -> str | None:
    if spec.config_name:
        return spec.config_name
    if cache is None:
        return None
    return entry_config_name(cache.source, spec.module)[1]


def check_launch(spec: LaunchSpec, config_name: str | None, cache: ConfigCache) -> list[Finding]:
    if config_name is None:
        return [
            Finding.at(
                spec.loc,
                "unknown-entry",
                "warning",
                f"{spec.module} is not a Hydra entry point of this verl; its arguments are not checked",
            )
        ]
    if spec.config_path not in (None, "config", "./config", "config/"):
        return [
            Finding.at(
                spec.config_path_loc or spec.loc,
                "config-path",
                "warning",
                f"--config-path={spec.config_path} is not verl's own config tree; overrides are not checked",
            )
        ]
    if not re.fullmatch(r"[\w./-]+", config_name) or not os.path.isfile(
        os.path.join(cache.source.path, config_name + ".yaml")
    ):
        return [
            Finding.at(
                spec.config_name_loc or spec.loc,
                "config-name",
                "error",
                f"--config-name={config_name}: verl has no {config_name}.yaml in {cache.source.path}",
            )
        ]
    texts, where = [], []
    findings = []
    for o in spec.overrides:
        text = o.checkable
        if text is None:
            findings.append(
                Finding.at(
                    o.loc, "unknown-argument", "info", f"argument '{o.text}' is not known statically; it is not checked"
                )
            )
            continue
        texts.append(text)
        where.append(o)
    for p in check_overrides(cache, config_name, texts):
        loc = where[p.index].loc if p.index is not None else spec.loc
        findings.append(Finding.at(loc, p.rule, "error", p.message, p.key))
    return findings
