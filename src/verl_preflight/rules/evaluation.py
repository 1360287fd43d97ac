"""verl's start-up checks over one launch (sources.verl_checks), evaluated once per launch and
shared by the rules that read them: verl-check (a check verl's code fails), config-value (a value
outside the constants verl's test compares it with) and parallelism (what verl says first)."""

from __future__ import annotations

import os

from ..hydra_stage.tree import _module_files, in_verl
from ..sources.verl_checks import Evaluation, entry_checks, evaluate
from ..sources.verl_classes import verl_sources

_NOT_YET = object()


def said_by_verl(view) -> frozenset:
    """The keys of the checks verl's own start-up code fails on this launch (verl-check reports
    them): a rule that finds the same mistake later in the run (Megatron refusing the layout, the
    first step's split) leaves it to the check verl meets first."""
    evaluation = launch_evaluation(view) if view.composes else None
    if evaluation is None:
        return frozenset()
    return frozenset(k for f in evaluation.failures if not f.value_set for k in f.own)


def launch_evaluation(view) -> Evaluation | None:
    """verl's start-up checks over one launch, evaluated once per launch and shared by the rules
    that read them (verl-check, and config-value for the sections it leaves to them); None when
    the launch's verl sources are not here or its entry point (verl's module, or a project's own
    Hydra app) runs no such check."""
    cached = getattr(view, "_verl_evaluation", _NOT_YET)
    if cached is not _NOT_YET:
        return cached
    source = view.source
    registry = verl_sources(source.package_root if source is not None else None)
    module = in_verl(view.spec.module)
    app = getattr(view.spec, "app", None)  # a Hydra app of the project's: its own module's calls decide
    result = None
    if registry is not None and (module is not None or app is not None):
        candidates = [app.file] if app is not None else _module_files(registry.root, module)
        files = [f for f in candidates if f.endswith(".py") and os.path.isfile(f)]
        checks = entry_checks(registry.root, files[0] if files else None)
        if checks:
            result = evaluate(registry, view, checks)
    view._verl_evaluation = result
    return result
