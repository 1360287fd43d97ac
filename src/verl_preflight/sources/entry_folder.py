"""The modules of a launch's entry folder, read for what verl's own code does not follow there.

`own_worker`: an entry that runs workers of its own, where verl's workers never read its config.

Some entries build their own worker from verl's bare `Worker` base (verl-recipe's
dance_grpo: `class DiffusionActorRolloutWorker(Worker, ...)` in the entry's folder, which
builds its own model and rollout): the conversions and checks verl's ActorRolloutRefWorker
makes (its config dataclasses, its micro-batch split, its rollout registry) do not run on
that launch's `actor_rollout_ref`. A worker that subclasses one of verl's (`class
MyWorker(ActorRolloutRefWorker)`) inherits them, and is not one of these.

`spelling`: a value that code of the entry's folder spells (LUFFY's fork: `adv_estimator ==
'grpo_split'` in mix_src/, whose trainer its entry builds instead of verl's).

Read with `ast` or as text from the modules of the entry's own folder, never run.
"""

from __future__ import annotations

import ast
import os
import warnings

from ..store.dependencies import read_source
from .hydra_app import dotted_name

_MODULES = 200  # modules of the entry's folder read at most
BARE = "Worker"  # verl.single_controller.base.Worker: a worker built from it is the project's own


def _modules(folder: str):
    """(name, text) of each module of the folder (not below it), sorted, _MODULES at most."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))[:_MODULES]
    except OSError:
        return
    for name in names:
        yield name, read_source(os.path.join(folder, name), errors="replace") or ""


def own_worker(folder: str) -> str | None:
    """`DiffusionActorRolloutWorker (diffusion_workers.py:92)`: the first class of the folder's
    modules built on verl's bare Worker; None where there is none."""
    for name, text in _modules(folder):
        if "Worker" not in text:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [(dotted_name(b) or "").rsplit(".", 1)[-1] for b in node.bases]
                if BARE in bases:
                    return f"{node.name} ({name}:{node.lineno})"
    return None


def spelling(folder: str, value: str) -> str | None:
    """`mix_src/mix_trainer.py:180`: the first line of the folder's modules that spells `value`
    as a string literal; None where none does."""
    quoted = (f"'{value}'", f'"{value}"')
    for name, text in _modules(folder):
        for number, line in enumerate(text.splitlines(), start=1):
            if any(q in line for q in quoted):
                return f"{os.path.join(os.path.basename(folder), name)}:{number}"
    return None
