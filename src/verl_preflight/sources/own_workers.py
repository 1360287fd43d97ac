"""A project's entry that runs workers of its own: verl's workers never read its config.

Some entries build their own worker from verl's bare `Worker` base (verl-recipe's
dance_grpo: `class DiffusionActorRolloutWorker(Worker, ...)` in the entry's folder, which
builds its own model and rollout): the conversions and checks verl's ActorRolloutRefWorker
makes (its config dataclasses, its micro-batch split, its rollout registry) do not run on
that launch's `actor_rollout_ref`. A worker that subclasses one of verl's (`class
MyWorker(ActorRolloutRefWorker)`) inherits them, and is not one of these. Read with `ast`
from the modules of the entry's own folder, never run.
"""

from __future__ import annotations

import ast
import os
import warnings

from ..store.dependencies import read_source
from .hydra_app import dotted_name

_MODULES = 200  # modules of the entry's folder read at most
BARE = "Worker"  # verl.single_controller.base.Worker: a worker built from it is the project's own


def own_worker(folder: str) -> str | None:
    """`DiffusionActorRolloutWorker (diffusion_workers.py:92)`: the first class of the folder's
    modules built on verl's bare Worker; None where there is none."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))[:_MODULES]
    except OSError:
        return None
    for name in names:
        text = read_source(os.path.join(folder, name), errors="replace")
        if not text or "Worker" not in text:
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
