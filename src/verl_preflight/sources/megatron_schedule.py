"""How many micro batches Megatron-Core's pipeline schedule accepts, read from the release's code.

verl's Megatron workers hand each mini batch (and each log-prob batch) to
`get_forward_backward_func()` as `num_microbatches` micro batches. With more
than one pipeline stage and a virtual pipeline size set, that is
`forward_backward_pipelining_with_interleaving`, which refuses a number of micro
batches outside [microbatch_group_size_per_vp_stage, ...] and a final group
smaller than the pipeline (megatron-core 0.12.0 pipeline_parallel/schedules.py:
777-798); the group size defaults to the pipeline size
(`ModelParallelConfig.__post_init__`, model_parallel_config.py:389-390).
`interleaved_failure` runs those functions of the megatron-core release the
stack names with sources/pyeval/ over the launch's sizes: nothing of
Megatron is imported.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from ..store.derived import kept_reading
from ..store.session import memo
from ._pyast import ParsedWhenUsed, Span, parse_file, statement_at
from .megatron import SOURCE_FILES, installed_tree_of, megatron_file
from .pyeval import UNKNOWN, Evaluator, Failure, Obj, V

SCHEDULES = ("megatron", "core", "pipeline_parallel", "schedules.py")
MODULE = "megatron.core.pipeline_parallel.schedules"
# the calls by which the schedule asks the pipeline's size (parallel_state in 0.12, the p2p group later)
PIPELINE_SIZE = ("parallel_state.get_pipeline_model_parallel_world_size", "p2p_communicator.pp_group.size")


@dataclass(frozen=True)
class Schedule:
    version: str
    functions: object  # name -> FunctionDef of schedules.py (.get, [], in)
    post_init: ast.FunctionDef | None  # ModelParallelConfig.__post_init__


@memo(limit=8)
def schedule(version: str) -> Schedule | None:
    """megatron-core `version`'s schedules; None when its sources are not here."""
    root = installed_tree_of(version)
    if root is not None:
        spans = _installed_spans(root)
        if spans is None or "get_forward_backward_func" not in spans[0]:
            return None
        return Schedule(version, ParsedWhenUsed(spans[0]), statement_at(spans[1]))
    tree = megatron_file(version, SCHEDULES)
    config = megatron_file(version, SOURCE_FILES[0])
    if tree is None:
        return None
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if "get_forward_backward_func" not in functions:
        return None
    return Schedule(version, functions, _post_init(config))


@kept_reading(lambda root: (os.path.join(root, *SCHEDULES), os.path.join(root, *SOURCE_FILES[0])))
def _installed_spans(root: str):
    """(the spans of schedules.py's functions by name, the span of ModelParallelConfig.__post_init__):
    the two modules are parsed once per machine, not once per process."""
    path = os.path.join(root, *SCHEDULES)
    tree = parse_file(path)
    if tree is None:
        return None
    functions = {n.name: Span.of(path, n) for n in tree.body if isinstance(n, ast.FunctionDef)}
    config_path = os.path.join(root, *SOURCE_FILES[0])
    post_init = _post_init(parse_file(config_path))
    return functions, Span.of(config_path, post_init) if post_init is not None else None


def _post_init(tree):
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == "ModelParallelConfig":
            return next((m for m in node.body if isinstance(m, ast.FunctionDef) and m.name == "__post_init__"), None)
    return None


def interleaved_failure(view, found: Schedule, pp: int, vpp: int, micro_batches: int, group) -> Failure | None:
    """What the schedule verl gets raises for `micro_batches` micro batches with pipeline size `pp`,
    virtual pipeline size `vpp` and microbatch_group_size_per_vp_stage `group` (None: its default);
    None when it raises nothing or the schedule is not the interleaved one."""
    chosen = _chosen(view, found, pp, vpp)
    if chosen is None or chosen.name != "forward_backward_pipelining_with_interleaving":
        return None
    config = _model_config(view, found, pp, vpp, group)
    if config is None:
        return None
    calls = {name: pp for name in PIPELINE_SIZE}
    calls["get_model_config"] = config
    ev = Evaluator(view, calls=calls, functions=found.functions, module=MODULE)
    params = {a.arg: V(UNKNOWN) for a in [*chosen.args.args, *chosen.args.kwonlyargs]}
    params["num_microbatches"] = V(micro_batches)
    params["forward_only"] = V(False)
    ev.run(chosen.body, params)
    return ev.failures[0] if ev.failures else None


def _chosen(view, found: Schedule, pp: int, vpp: int):
    """The schedule `get_forward_backward_func` returns for these sizes."""
    func = found.functions["get_forward_backward_func"]
    calls = {
        "parallel_state.get_pipeline_model_parallel_world_size": pp,
        "parallel_state.get_virtual_pipeline_model_parallel_world_size": vpp,
    }
    ev = Evaluator(view, calls=calls, functions=found.functions, module=MODULE)
    chosen = ev.returned(func, {a.arg: V(None) for a in func.args.args}).value
    return getattr(chosen, "node", None)


def _model_config(view, found: Schedule, pp: int, vpp: int, group) -> Obj | None:
    """The model's config as far as the schedule reads it, after ModelParallelConfig.__post_init__."""
    config = Obj(
        {
            "pipeline_model_parallel_size": pp,
            "virtual_pipeline_model_parallel_size": vpp,
            "microbatch_group_size_per_vp_stage": group,
        },
        complete=False,
    )
    if found.post_init is not None:
        ev = Evaluator(view, module="megatron.core.model_parallel_config")
        ev.run(found.post_init.body, {found.post_init.args.args[0].arg: V(config)})
        if ev.failures:
            return None
    if not isinstance(config.fields.get("microbatch_group_size_per_vp_stage"), int):
        return None
    return config
