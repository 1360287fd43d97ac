"""The pipeline for one script: read -> parse -> profiles -> evaluate -> launches -> checks -> findings.

Each stage lives in its own module; this one only wires them: the shell's notes
become findings of the bash rules, each launch is checked by the Hydra stage
(hydra_stage/check.py), and the policy rules run over the view of each launch.
"""

from __future__ import annotations

import functools
import os

from ..core.bounded_read import DEFAULT_MAX_BYTES, ReadError, TooLarge
from ..core.findings import Finding, merge_findings, one_per_mistake
from ..core.script_reader import Recorder, read_script
from ..core.values import Assumption, Loc, Profile, Unknown, shown_path
from ..hydra_stage.check import check_launch, config_name_of
from ..hydra_stage.tree import ConfigCaches, has_source, own_arguments
from ..rules import for_note, from_problem, remedy, run_launch_rules, run_script_rules
from ..rules.bash.budget import Budget as BudgetRule
from ..rules.bash.unset_variable import UnsetVariable
from ..rules.policy.unassigned_variable import inputs_of
from ..rules.tool.file_too_large import FileTooLarge
from ..rules.tool.profiles_capped import ProfilesCapped
from ..rules.view import ScriptContext, build_view
from ..shell import profiles as prof
from ..shell.evaluate import Allowance, Budget, evaluate, secret_values, set_by_environment
from ..shell.notes import NoteKind
from ..shell.parse import parse_script, syntax_notes
from ..shell.words import Field
from ..store.dependencies import sources_entry
from ..target.config_folder import project_root, search_of
from ..target.launch_target import Forced, ScriptSignals, decide
from ..target.launch_verl import Choice, working_folder
from . import fix, suppressions
from .launches import (
    LaunchSpec,
    collapse_key,
    launch_environment,
    launch_of,
    other_program,
    read_launch,
    wrapped_script,
)
from .options import Options  # noqa: F401  (validate.Options: the options every script is checked with)
from .reach import why_no_launch, why_unchecked
from .results import LaunchResult, ProfileResult, ScriptResult
from .value_origin import with_origins

_STOPS = (NoteKind.INCOMPLETE, NoteKind.BUDGET)  # the notes that say where the evaluator stopped

__all__ = ["Options", "ReadError", "ScriptResult", "validate_script"]


def _traits(rule_id: str) -> tuple[str | None, str]:
    """(stage, concern) of a rule, for one_per_mistake."""
    from ..rules import get

    cls = get(rule_id)
    return (cls.stage, cls.concern) if cls is not None else (None, "value")


def note_finding(note) -> Finding:
    """A shell note as a finding of the bash rule of the same id."""
    return for_note(note.kind).from_note(note)


def _say_profile(finding: Finding, info, profile) -> Finding:
    """An unset variable that the script does assign, in other branches: say in which profile
    it is left unassigned (the message then names the profile, so it is not merged)."""
    from dataclasses import replace

    if finding.rule == UnsetVariable.id and finding.key in info.assigned:
        name = finding.key
        where = profile.describe()
        when = f"in profile {where}" if where != "default" else "on this path"
        message = (
            f"`set -u` is on and {name} is not assigned {when} (only other branches assign it): "
            f"the script stops here unless {name} is exported"
        )
        finding = replace(finding, message=message)
    return finding.in_profile(profile)


def validate_script(path: str, caches: ConfigCaches | None, opts: Options) -> ScriptResult:
    """Check one script: the pipeline of the module docstring. `caches`: the run's config trees
    (None: the bash stages only)."""
    result = ScriptResult(path)
    try:
        data = _buffer(path, opts) if path != "-" or opts.stdin is None else opts.stdin
        if len(data) > opts.max_bytes:
            raise TooLarge(path)
    except TooLarge:
        message = f"larger than {opts.max_bytes} bytes: not checked (raise --max-bytes)"
        result.findings.append(FileTooLarge.emit(Loc(path, 1, 1), message))
        return result
    read_file = Recorder(opts.max_bytes, opts.buffers)
    read_file.note(path, data)
    script = parse_script(path, data)
    findings = [note_finding(n) for n in syntax_notes(script)]
    info = prof.scan(script, read_file=read_file)
    result.reads = set(info.reads) | set(info.inputs) | set(info.tested)
    refused = bool(findings)  # bash-syntax: bash refuses the script; no reading of it is sure enough to rewrite
    envs, unset, ambient, unseen, result.coverage = _profile_envs(path, info, opts, findings)
    if refused:
        unseen = "bash cannot parse this script (bash-syntax)"
    all_launches = []
    checked: list[fix.LaunchFindings] = []  # each launch in each profile, with its findings
    parsed: dict = {}
    allowance = Allowance(opts.budget)  # one step and time budget for the script, shared by its profiles
    elsewhere: dict = {}  # Loc of a word -> a Python program, not verl, that gets it too (--fix)

    runs: dict = {}  # (program, kind) -> [Loc]: what the script runs that might hold a launch (reach.NoLaunch)

    def on_command(argv, loc, last_word="", environment=None):
        def project_entry(module: str) -> bool | None:  # launches._is_entry: the project's Hydra app or not
            if caches is None:
                return None
            folders = _start_folders(launch_environment(argv, environment), path)
            file, app = caches.project_module(path, module, folders)
            return (app is not None) if file is not None else None

        launch = launch_of(argv, loc, last_word, environment, project_entry)
        program = other_program(argv, project_entry) if launch is None else None
        if program is not None:
            if program.endswith(".py"):  # a Python program of the project's that may launch verl itself
                here = _program_here(program.split()[-1], path)
                runs.setdefault((program, "python" if here else "python-absent"), []).append(loc)
            for f in argv:
                if f.loc is not None:
                    elsewhere.setdefault(f.loc, program)
        wrapper = wrapped_script(argv, os.path.dirname(path)) if launch is None and program is None else None
        if wrapper is not None:
            runs.setdefault((wrapper[0], "followed" if wrapper[1] else "absent"), []).append(loc)
        return launch

    given = tuple(Field.of(a) for a in opts.args or ())  # --args: the script's positional arguments

    def run(env, unset_here=unset, positional=given):
        return evaluate(
            script,
            env,
            unset_here,
            on_command,
            ambient=ambient,
            allowance=allowance,
            parsed=parsed,
            read_file=read_file,
            switches=info,
            positional=positional,
        )

    evaluated = [run(env) for env in envs]
    if opts.args is None:  # a guard that stops the script: also followed as a correct use runs it
        for env, outcomes in list(zip(envs, evaluated, strict=True)):
            evaluated += _as_used_correctly(info, unset, outcomes, functools.partial(run, env))
    texts = {path: data.decode("utf-8", "replace")}  # the script and the files it sources, by path
    texts.update({p: s.source.decode("utf-8", "replace") for p, s in parsed.items()})
    signals = ScriptSignals.read(path, texts, read_file)
    forced = _forced(opts)
    collapsed = prof.collapse(evaluated, collapse_key)  # profiles that launch the same thing are one
    labels = prof.labels([outcome.env for outcomes in collapsed for outcome in outcomes])
    labelled = iter(labels)
    secrets = set(secret_values(ambient or {}))
    for outcomes in collapsed:
        for outcome in outcomes:
            secrets |= outcome.secrets | {s for la in outcome.launches for s in secret_values(la.env)}
            profile = Profile.of(outcome.env, outcome.assumptions, next(labelled))
            launches = []
            if outcome.status == "incomplete":
                unseen = f"profile {profile.describe()} could not be followed to its end"
            findings.extend(_say_profile(note_finding(n), info, profile) for n in outcome.notes)
            for launch in outcome.launches:
                all_launches.append(launch)
                launch_result, this = _check_launch(launch, profile, caches, opts, (signals, forced, path), read_file)
                launches.append(launch_result)
                checked.append(this)
                findings.extend(this.findings)
            stopped = next(((n.loc, n.message) for n in outcome.notes if n.kind in _STOPS), None)
            stopped = stopped if outcome.status == "incomplete" else None
            result.profiles.append(ProfileResult(profile, outcome.status, launches, outcome.ended, stopped))
    if caches is not None and not refused:
        result.unchecked = why_unchecked(script, result.profiles)
        result.no_launch = why_no_launch(result.profiles, runs) if result.unchecked is None else None
    repo = caches.repositories.of(path) if caches is not None and path != "-" else None
    # (read through this script's reader, and only where a launch reads a variable it never sets)
    documented = (lambda: repo.documented_inputs(path, read_file.text)) if repo is not None else None
    context = ScriptContext(script, parsed, all_launches, read_file.text, info, set_by_environment(script), documented)
    result.inputs = inputs_of(context)
    given = (lambda: repo.script_inputs(path, read_file.text)) if repo is not None else None
    findings = _given_are_inputs(findings, given, result)
    if opts.schema is not None:
        findings.extend(run_script_rules(opts.schema, context))
    if allowance.timed_out:  # what was found so far depends on the machine's load: none of it
        findings, unseen = [_timed_out(path, opts.budget)], "the check of this script was stopped by the clock"
        result.profiles = [ProfileResult(p.profile, "incomplete", []) for p in result.profiles]
    scripts = {script.path: script, **{s.path: s for s in parsed.values()}}
    findings = fix.resolve(findings, checked, scripts, unseen, elsewhere)
    findings = with_origins(findings, scripts, lambda rule: _traits(rule)[0])
    result.reached = {(f.loc.path, f.loc.line, f.loc.col) for la in checked for f in la.spec.argv if f.loc}
    result.reached |= {(loc.path, loc.line, loc.col) for loc in elsewhere}
    result.findings = one_per_mistake(merge_findings(suppressions.apply(findings, texts)), _traits)
    result.secrets = frozenset(secrets)
    result.deps = dict(read_file.digests)
    if repo is not None:  # what the repository was read for: its verl, its entry modules (repository.py)
        result.deps.update(repo.files_read)
    sources = sources_entry()
    if sources is not None:  # verl's Python, Megatron's, a model's config.json: inputs like the script
        result.deps[sources[0]] = sources[1]
    return result


def _given_are_inputs(findings: list, given, result) -> list:
    """Under `set -u`, a variable given to this script (the template of a file it sources, a
    wrapper that runs it: repository.script_inputs) is an input, listed in its note, not an
    `unset-variable` warning. `given()`: those variables, asked only where such a warning is."""
    unset = {f.key for f in findings if f.rule == UnsetVariable.id and f.key}
    if not unset or given is None:
        return findings
    inputs = {name: where for name, where in given().items() if name in unset}
    if not inputs:
        return findings
    have = {name for name, _ in result.inputs}
    result.inputs = [*result.inputs, *((n, w) for n, w in sorted(inputs.items()) if n not in have)]
    return [f for f in findings if not (f.rule == UnsetVariable.id and f.key in inputs)]


def _buffer(path: str, opts: Options) -> bytes:
    """The script's text: the editor's buffer of it (Options.buffers), else the file."""
    if opts.buffers and os.path.abspath(path) in opts.buffers:
        return opts.buffers[os.path.abspath(path)]
    return read_script(path, opts.max_bytes)


def _timed_out(path: str, budget) -> Finding:
    message = (
        f"not checked: this script's evaluation ran past {budget.seconds:g} s on this machine (a limit of the "
        "tool: nothing of it is reported, since what it had found depended on the machine's load)"
    )
    return BudgetRule.emit(Loc(path, 1, 1), message)


def _as_used_correctly(info, unset: set, outcomes, run) -> list:
    """A profile in which the script stops itself at a guard (`[ "$#" -lt 2 ] && exit 1`,
    `${MODEL_PATH:?}`) is also followed as a correct use runs it: with the positional arguments
    it uses given (each unknown) and its `${X:?}` variables set (to an unknown value). The
    outcomes that then launch are kept, labelled with what was assumed; [] when none does."""
    if not any(o.status == "rejected" for o in outcomes) or not (info.arguments or info.required):
        return []
    given = tuple(Field((Unknown(f"${n}", f"argument {n} of the script"),)) for n in range(1, info.arguments + 1))
    retried = run(unset_here=unset - info.required, positional=given)
    assumed = ((Assumption("arguments", "given", (info.arguments,)),) if info.arguments else ()) + tuple(
        Assumption(name, "given") for name in sorted(info.required)
    )
    kept = [o for o in retried if o.status in ("launches", "incomplete")]
    for o in kept:
        o.assumptions = assumed + tuple(a for a in o.assumptions if a not in assumed)
    return [kept] if kept else []


def _profile_envs(path: str, info, opts: Options, findings: list):
    """(envs, unset inputs, ambient environment, why some profiles are unseen or None, the
    shell.profiles.Choice or None): the profiles to evaluate: this machine's (--profile
    current), the pinned ones, or the script's switches' combinations: all of them when they
    fit --max-profiles, else a covering array (every arm, every pair of switch values), a
    finding when not even that fits."""
    unset = prof.unset_inputs(info)
    unseen = "the profiles are pinned (--profile): the others are not known" if opts.current or opts.pinned else None
    ambient = opts.ambient
    chosen = None
    if opts.current:
        from ..target.machine import current_env  # (this machine is read only for --profile current)

        device = opts.probed_device[0] if opts.probed_device else None
        envs, ambient = [current_env(prof.dimensions(info), device)], dict(os.environ)
    elif opts.pinned:
        envs = [dict(p) for p in opts.pinned]
        unset |= {k for p in envs for k in p}
    else:
        chosen = prof.choose(prof.dimensions(info), opts.max_profiles)
        envs = chosen.profiles
        if not chosen.exhaustive:
            unseen = f"only {len(envs)} of {chosen.total:,} combinations of the switches were checked"
        if chosen.capped:
            findings.append(ProfilesCapped.emit(Loc(path, 1, 1), chosen.summary()))
    return envs, unset, ambient, unseen, chosen


def _forced(opts: Options) -> Forced:
    """What the run decides for every launch: --device, --stack, and this machine under --profile current."""
    if not opts.current:
        return Forced(device=opts.device, stack=dict(opts.stack))
    from ..target.machine import installed_stack  # (this machine is read only for --profile current)

    return Forced(
        device=opts.device, stack=dict(opts.stack), machine_device=opts.probed_device, installed=installed_stack()
    )


def _check_launch(launch, profile, caches, opts: Options, script_facts, read_file):
    """One launch in one profile: its config folders, the Hydra stage, its target, then the
    policy rules over its view. (LaunchResult, fix.LaunchFindings)."""
    signals, forced, path = script_facts  # path: the script checked (the launch may be in a file it runs)
    spec = read_launch(launch)
    spec.app = caches.project_module(path, spec.module, _start_folders(spec.env, path))[1] if caches is not None else None
    source = _verl_of(caches, spec, path) if caches is not None else None
    root = _working_folder(spec, path) or project_root(path, source)
    config_name = config_name_of(spec, source)
    search = search_of(spec, source, root, config_name)
    overrides = [o.display for o in spec.overrides]
    this = fix.LaunchFindings(profile, spec)
    if config_name is not None or caches is None:  # a module that is no Hydra app parses its own args
        this.findings.extend(from_problem(p).in_profile(profile) for p in spec.problems)
    view = None
    if caches is not None and spec.trains and not source.missing:  # (the project's verl not here: said, unchecked)
        cache = caches.get(source, search.tree) if search.checkable else caches.main
        if cache is not caches.main:  # what the result depends on besides the run's own tree
            read_file.digests[cache.dependency()] = cache.digest
        hydra = [from_problem(p) for p in check_launch(spec, config_name, cache, search, remedy, source)]
        this.findings.extend(f.in_profile(profile) for f in hydra)
        view = build_view(spec, config_name, profile, cache, search.checkable)
        if view is not None:
            view.composes = not any(f.severity == "error" for f in hydra)
    target = decide(spec, profile, signals, forced, source, search, view)
    if view is not None and opts.schema is not None:
        view.target = target
        found = run_launch_rules(opts.schema, view, opts)
        this.findings.extend(f.in_profile(profile) for f in found)
    unchecked = _why_not_composed(spec, config_name, caches, source, search)
    result = LaunchResult(spec.loc.line, spec.module, config_name, overrides, spec, target, unchecked)
    return result, this


def _start_folders(env: dict, path: str) -> tuple:
    """The folder a launch runs in, where the script's `cd` (or `ray job submit --working-dir`)
    names one that is here (launch_verl.working_folder): its modules are found there first; ()
    otherwise (the repository root and the script's folder, as the project's scripts are run)."""
    where = working_folder(env, path)
    return (where,) if where is not None and os.path.isdir(where) else ()


def _program_here(program: str, path: str) -> bool:
    """Whether `python3 program.py` finds its file: beside the script, from its repository's root
    (where its scripts run), or from here."""
    if path == "-":
        return os.path.isfile(program)
    from ..core.repository import root_of

    bases = (os.path.dirname(os.path.abspath(path)), root_of(path), os.getcwd())
    return any(b is not None and os.path.isfile(os.path.join(b, program)) for b in bases)


def _working_folder(spec, path: str) -> str | None:
    """The folder the launch runs in, where the script says it: a `cd` to a folder that is here
    (_start_folders), or, for `python3 train.py` with no `cd`, the folder from which that relative
    path names the program found (the script must be run from there); None: not said (the
    repository root, config_folder.project_root)."""
    here = _start_folders(spec.env, path)
    if here:
        return here[0]
    app = spec.app
    program = spec.module
    if app is None or spec.env.get("PWD") is not None or not program.endswith(".py") or os.path.isabs(program):
        return None
    parts = os.path.normpath(program).split(os.sep)
    if ".." in parts:
        return None
    folder = os.path.dirname(app.file)
    for _ in parts[:-1]:
        folder = os.path.dirname(folder)
    return folder


def _verl_of(caches: ConfigCaches, spec, path: str):
    """The verl the launch imports (target.launch_verl), decided once a run for each place."""
    if caches.choice is None or caches.choice.main is not caches.main.source:
        caches.choice = Choice(caches.main.source, caches.explicit, caches.release)
    repo = caches.repositories.of(path) if path != "-" else None
    return caches.choice.decide(spec, path, repo)


def _how_to_give(spec) -> str:
    """How the user can give the value --config-name is made of: --args for the script's
    arguments, --profile for an environment variable; empty when it is neither."""
    args = spec.argv[spec.entry + 1 :]
    for i, f in enumerate(args):
        head = f.pieces[0] if f.pieces and isinstance(f.pieces[0], str) else ""
        if head.partition("=")[0] in ("--config-name", "-cn"):
            word = f if "=" in head else (args[i + 1] if i + 1 < len(args) else None)
            labels = [p.label for p in (word.pieces if word is not None else ()) if not isinstance(p, str)]
            if any(label.startswith("argument ") for label in labels):
                return " (it is an argument of the script: --args gives them)"
            names = [label.rpartition(" ")[2] for label in labels if label.startswith("environment variable ")]
            if names:
                return f" (it is {names[0]} from the environment: --profile {names[0]}=... gives it)"
    return ""


def _why_not_composed(spec, config_name, caches, source, search) -> str | None:
    """Why the Hydra stage did not compose this launch's config; None when it did."""
    if caches is None:
        return "no verl config tree"
    if source is not None and source.missing:
        return source.missing
    if spec.app is not None and spec.app.why:
        return spec.app.why
    if not spec.trains:
        return "a Hydra flag changes what it does (hydra-flag)"
    own = own_arguments(source, spec.module) if config_name is None else None
    if own:
        return f"{spec.module} reads options of its own ({own}), not Hydra's"
    if config_name is None and has_source(source, spec.module):
        return f"{spec.module} is not a Hydra entry point of this verl"
    if config_name is None or not search.checkable and spec.app is None and not has_source(source, spec.module):
        where = os.path.dirname(source.package_root) if source.package_root else None
        beside = f" (no {spec.module.replace('.', '/')}.py in {shown_path(where)})" if where else ""
        return f"{spec.module} has no source here{beside}"
    if spec.config_name is None and spec.config_name_loc is not None:
        return "--config-name is known only at run time" + _how_to_give(spec)
    if not search.checkable:
        return search.missing + (f" ({search.assumed})" if search.assumed else "")
    return None
