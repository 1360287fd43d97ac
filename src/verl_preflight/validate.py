"""The pipeline for one script: read -> parse -> profiles -> evaluate -> launches -> checks -> findings.

Each stage lives in its own module; this one only wires them: the shell's notes
become findings of the bash rules, each launch is checked by the Hydra stage
(checks/config.py), and the policy rules run over the view of each launch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .checks import suppressions
from .checks.config import check_launch, config_name_of
from .findings import Finding, merge_findings
from .launches import LaunchSpec, launch_of, read_launch
from .machine import current_env
from .rules import get as rule_class
from .rules import run_launch_rules, run_script_rules
from .rules.tool.file_too_large import FileTooLarge
from .rules.tool.profiles_capped import ProfilesCapped
from .rules.view import ScriptContext, build_view
from .shell import profiles as prof
from .shell.evaluate import Budget, evaluate
from .shell.parse import parse_script, syntax_notes
from .source import DEFAULT_MAX_BYTES, ReadError, TooLarge, read_script, reader
from .values import Loc, Profile
from .verl_config import ConfigCache

__all__ = ["Options", "ReadError", "ScriptResult", "validate_script"]


@dataclass
class Options:
    max_profiles: int = 64
    pinned: list | None = None  # list of env dicts from --profile
    max_bytes: int = DEFAULT_MAX_BYTES
    budget: Budget = field(default_factory=Budget)
    ambient: dict | None = None  # tests: the complete environment
    schema: object = None  # rules.schema.Schema; None: no policy rules
    current: bool = False  # --profile current: this machine's environment
    model_config: str | None = None  # --model-config DIR: the model's config.json for the shape rules
    device_memory: float | None = None  # --device-memory GB; None: the device kind's default


@dataclass
class LaunchResult:
    line: int
    module: str
    config_name: str | None
    overrides: list
    spec: LaunchSpec | None = None


@dataclass
class ProfileResult:
    profile: Profile
    status: str
    launches: list


@dataclass
class ScriptResult:
    path: str
    profiles: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    fatal: str | None = None


def note_finding(note) -> Finding:
    """A shell note as a finding of the bash rule of the same id."""
    return rule_class(note.kind.value).emit(note.loc, note.message, note.key)


def validate_script(path: str, cache: ConfigCache | None, opts: Options) -> ScriptResult:
    result = ScriptResult(path)
    try:
        data = read_script(path, opts.max_bytes)
    except TooLarge:
        message = f"larger than {opts.max_bytes} bytes: not checked (raise --max-bytes)"
        result.findings.append(FileTooLarge.emit(Loc(path, 1, 1), message))
        return result
    read_file = reader(opts.max_bytes)
    script = parse_script(path, data)
    findings = [note_finding(n) for n in syntax_notes(script)]
    info = prof.scan(script, read_file=read_file)
    unset = prof.unset_inputs(info)
    ambient = opts.ambient
    if opts.current:
        envs, ambient = [current_env(prof.dimensions(info))], dict(os.environ)
    elif opts.pinned:
        envs = [dict(p) for p in opts.pinned]
        unset |= {k for p in envs for k in p}
    else:
        envs, total = prof.enumerate_profiles(prof.dimensions(info), opts.max_profiles)
        if total > len(envs):
            message = f"{total} profiles, only the first {len(envs)} were checked (--max-profiles)"
            findings.append(ProfilesCapped.emit(Loc(path, 1, 1), message))
    all_launches = []
    parsed: dict = {}
    for env in envs:
        outcomes = evaluate(
            script, env, unset, launch_of, ambient=ambient, budget=opts.budget, parsed=parsed, read_file=read_file
        )
        for outcome in outcomes:
            profile = outcome.profile
            launches = []
            findings.extend(note_finding(n).in_profile(profile) for n in outcome.notes)
            for launch in outcome.launches:
                all_launches.append(launch)
                spec = read_launch(launch)
                config_name = config_name_of(spec, cache)
                overrides = [o.display for o in spec.overrides]
                launches.append(LaunchResult(spec.loc.line, spec.module, config_name, overrides, spec))
                findings.extend(p.in_profile(profile) for p in spec.problems)
                if cache is None or not spec.trains:
                    continue
                findings.extend(f.in_profile(profile) for f in check_launch(spec, config_name, cache))
                if opts.schema is not None:
                    view = build_view(spec, config_name, profile, cache)
                    if view is not None:
                        found = run_launch_rules(opts.schema, view, opts)
                        findings.extend(f.in_profile(profile) for f in found)
            result.profiles.append(ProfileResult(profile, outcome.status, launches))
    if opts.schema is not None:
        findings.extend(run_script_rules(opts.schema, ScriptContext(script, parsed, all_launches)))
    sources = {path: data.decode("utf-8", "replace")}
    sources.update({p: s.source.decode("utf-8", "replace") for p, s in parsed.items()})
    result.findings = merge_findings(suppressions.apply(findings, sources))
    return result
