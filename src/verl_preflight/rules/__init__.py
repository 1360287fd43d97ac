"""Rules: every diagnostic the validator can emit is one class in one module.

A rule class carries its id (one spelling), its default severity, its doc (what
it finds, why it matters and the code that decides it, a bad and a good
example, whether `--fix` can repair it) and, for policy rules, its check. The
registry below discovers the classes by walking this package, so adding a rule
is adding one module (and its two fixtures under tests/fixtures/rules/<id>/).

Stages emit findings through the rule class (`SomeRule.emit(loc, message)`);
policy rules are instantiated from the schema (which may re-severity and
parameterise them) and emit with `self.finding(...)`.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import ClassVar

from ..core.findings import Finding

STAGES = ("bash", "hydra", "policy", "tool")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


class Rule:
    id: ClassVar[str] = ""
    severity: str = "error"  # the default; a schema entry may change it per instance
    stage: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    why: ClassVar[str] = ""  # what goes wrong at launch
    ground_truth: ClassVar[str] = ""  # the code that decides it: project, version, file:line
    bad: ClassVar[str] = ""
    good: ClassVar[str] = ""
    fixable: ClassVar[bool] = False
    fix_doc: ClassVar[str] = ""  # what `--fix` changes, and where it refuses (fixable rules)
    run_wide: ClassVar[bool] = False  # the same note for the whole run: reported once
    # a lint of style, not a launch that fails or misbehaves: reported only where the user turns it
    # on (`--enable RULE`, or a severity for it in [tool.validate-scripts])
    opt_in: ClassVar[bool] = False
    note: ClassVar[object] = None  # a bash rule: the shell.notes.NoteKind it reports
    problem: ClassVar[object] = None  # a Hydra rule: the hydra_stage.problems.HydraKind it reports
    scope: ClassVar[str | None] = None  # "launch" or "script" for policy rules with a check
    # "key": the rule says a key cannot be where it is (no such key, no such field, the wrong arm);
    # what several such rules say of one key at one place is one mistake, reported once
    concern: ClassVar[str] = "value"
    # what it checks is what verl's own workers do with the config (its dataclasses, its batch split,
    # its registries): an entry that runs a worker of its own is not judged by it (run_launch_rules)
    reads_verls_workers: ClassVar[bool] = False
    default_params: ClassVar[dict] = {}
    # why no fixture can make this rule fire (None: it has bad.sh and good.sh fixtures)
    no_fixture: ClassVar[str | None] = None

    def __init__(self, severity: str | None = None, params: dict | None = None):
        if severity is not None:
            self.severity = severity
        self.params = {**self.default_params, **(params or {})}

    @classmethod
    def emit(cls, loc, message: str, key: str | None = None, fix=None, at_most: str | None = None) -> Finding:
        """A finding of this rule at its default severity (stages use this), or `at_most` when that
        is weaker; `fix` (an edits.Fix) only from a rule that says it is fixable."""
        if fix is not None and not cls.fixable:
            raise TypeError(f"rule {cls.id} is not fixable, yet a fix was given")
        return Finding.at(loc, cls.id, weaker(cls.severity, at_most), message, key, fix)

    @classmethod
    def from_note(cls, note) -> Finding:
        """The finding a stage's note (shell.notes.Note) of this rule's kind becomes."""
        return cls.emit(note.loc, note.message, note.key)

    def finding(self, loc, message: str, key: str | None = None, fix=None, at_most: str | None = None) -> Finding:
        """A finding of this configured rule (policy checks use this). `at_most="warning"`: what
        the rule finds here does not fail the launch for sure (a key that is set and does nothing,
        a verdict that depends on a part of the target nothing decides), so it is no error even
        where the rule's severity is."""
        if fix is not None and not self.fixable:
            raise TypeError(f"rule {self.id} is not fixable, yet a fix was given")
        return Finding.at(loc, self.id, weaker(self.severity, at_most), message, key, fix)

    # policy rules override one of these
    def check_launch(self, view, ctx) -> list[Finding]:
        return []

    def check_script(self, script_ctx) -> list[Finding]:
        return []


def weaker(severity: str, at_most: str | None) -> str:
    """`severity`, lowered to `at_most` when that is weaker."""
    if at_most is None or SEVERITY_RANK.get(at_most, 2) >= SEVERITY_RANK.get(severity, 2):
        return severity
    return at_most


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


@lru_cache(maxsize=1)
def registry() -> dict[str, type[Rule]]:
    """Every rule class with an id, by id (modules of this package imported once)."""
    for info in pkgutil.walk_packages(__path__, __name__ + "."):
        importlib.import_module(info.name)
    found: dict[str, type[Rule]] = {}
    for cls in _subclasses(Rule):
        rid = cls.__dict__.get("id")
        if not rid:
            continue
        if rid in found and found[rid] is not cls:
            raise RuntimeError(f"rule id {rid!r} is defined twice: {found[rid].__module__} and {cls.__module__}")
        found[rid] = cls
    return dict(sorted(found.items(), key=lambda kv: (STAGES.index(kv[1].stage), kv[0])))


@lru_cache(maxsize=1)
def _by_problem() -> dict:
    return {cls.problem: cls for cls in registry().values() if getattr(cls, "problem", None) is not None}


def for_problem(kind) -> type[Rule]:
    """The Hydra rule that reports a Hydra stage problem of this kind (each names its `problem`)."""
    return _by_problem()[kind]


def remedy(problem, text: str, tree: dict, source):
    """(the fix, the message with its advice) the rule owning the problem's kind makes of one
    override's problem (hydra_stage.problems.Problem): its `repair` where it is fixable, its
    `advise` where it has one (the Hydra stage's `remedy`)."""
    cls = _by_problem().get(problem.kind)
    if cls is None:
        return None, problem.message
    repair = getattr(cls, "repair", None) if cls.fixable else None
    advise = getattr(cls, "advise", None)
    fix = repair(problem, text, tree, source) if repair is not None else None
    return fix, (advise(problem, text, tree, source) if advise is not None else problem.message)


def from_problem(problem) -> Finding:
    """The finding a located Hydra stage problem (hydra_stage.problems.LaunchProblem) becomes."""
    finding = for_problem(problem.kind).emit(problem.loc, problem.message, problem.key, problem.fix, problem.at_most)
    return finding.with_related(problem.related) if problem.related else finding


@lru_cache(maxsize=1)
def _by_note() -> dict:
    return {cls.note: cls for cls in registry().values() if getattr(cls, "note", None) is not None}


def for_note(kind) -> type[Rule]:
    """The bash rule that reports a shell note of this kind (each names its `note`)."""
    return _by_note()[kind]


def all_rules() -> list[type[Rule]]:
    return list(registry().values())


def get(rule_id: str) -> type[Rule] | None:
    return registry().get(rule_id)


def run_launch_rules(schema, view, ctx) -> list[Finding]:
    """Every launch-scoped policy of the schema over one launch in one profile. A rule that reads
    what verl's workers do with the config (Rule.reads_verls_workers) says no more than an info
    where the launch's entry runs workers of its own (sources.entry_folder)."""
    out = []
    own = None
    for policy in schema.policies:
        if policy.scope != "launch":
            continue
        found = policy.check_launch(view, ctx)
        if found and getattr(policy, "reads_verls_workers", False):
            own = own if own is not None else (_own_worker(view) or "")
            if own:
                found = [_not_followed(f, own) for f in found]
        out.extend(found)
    return out


def _own_worker(view) -> str | None:
    """The worker of its own a project's entry runs (sources.entry_folder), from its folder."""
    import os

    from ..sources.entry_folder import own_worker

    app = getattr(view.spec, "app", None)
    return own_worker(os.path.dirname(app.file)) if app is not None else None


def _not_followed(finding: Finding, own: str) -> Finding:
    from dataclasses import replace

    said = f"{finding.message} (the entry runs a worker of its own, {own}: verl's, which this reads, does not run)"
    return replace(finding, severity=weaker(finding.severity, "info"), message=said)


def run_script_rules(schema, script_ctx) -> list[Finding]:
    """Every script-scoped policy of the schema over one script."""
    return [f for policy in schema.policies if policy.scope == "script" for f in policy.check_script(script_ctx)]
