"""How a verl version splits batches over ranks and per GPU, read with `ast` from its tree.

- Worker normalization (verl before the engine workers: v0.4, and v0.7's legacy
  workers). `ActorRolloutRefWorker.__init__` and `CriticWorker.__init__`
  (workers/fsdp_workers.py, workers/megatron_workers.py) turn the global
  mini and micro batch sizes into per-GPU ones and assert on the result.
  `normalization` runs those constructors over the launch's config with
  sources/pyeval/ (world size, data-parallel size from the
  `initialize_model_parallel` call the constructor makes), for the roles the
  trainer builds: the actor/rollout worker, the ref worker, the critic.
- Engine workers (verl 0.8 on; v0.7 with use_legacy_worker_impl=disable). The
  trainer hands `update_actor` a mini batch of ppo_mini_batch_size x rollout.n
  (`_update_actor`, evaluated); the worker asserts it splits over the
  data-parallel ranks (`TrainingWorker.train_mini_batch`), and without dynamic
  batch size `prepare_micro_batches` (workers/engine/utils.py) asserts that a
  GPU's share splits into micro batches. `engine_asserts` finds both.
- Dispatch. `DataProto.chunk` (protocol.py) asserts an equal split unless
  padding is enabled (the VERL_AUTO_PADDING variable). `generation_split`
  finds what the trainer's generation step splits and into how many parts: the
  train batch over the worker group's ranks (verl 0.4's sync rollout,
  `Dispatch.DP_COMPUTE_PROTO`), or the batch repeated rollout.n times over the
  agent loop workers (`AgentLoopManager.generate_sequences`, rollout.agent.num_workers).
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from ..store.derived import kept, kept_reading
from ..store.session import memo
from ._pyast import Span, parse_file, statement_at, walk
from .pyeval import UNKNOWN, Assigned, Evaluator, Failure, Node, Obj, V
from .verl_lengths import Cite, _class_methods, _config_test, _parents, _rel, given, verl_imports, world_size

ARF = "actor_rollout_ref"
TRAINER = ("trainer", "ppo", "ray_trainer.py")  # the PPO trainer module, in a verl package


# ----------------------------------------------------------------------------
# which workers a launch gets
# ----------------------------------------------------------------------------


@kept
def engine_switch(root: str):
    """(key, values, default): the trainer.use_legacy_worker_impl values for which main_ppo
    imports the engine workers (an `if` whose body imports verl.workers.engine_workers); None
    when main_ppo has no such switch."""
    path = os.path.join(root, "trainer", "main_ppo.py")
    tree = parse_file(path)
    if tree is None:
        return None
    for node in walk(tree):
        if not isinstance(node, ast.If):
            continue
        imports = [
            n
            for b in node.body
            for n in walk(b)
            if isinstance(n, ast.ImportFrom) and n.module == "verl.workers.engine_workers"
        ]
        if not imports:
            continue
        test = _config_test(tree, node.test, negate=False)
        if test is not None:
            return test
    return None


def legacy_workers(view, root: str, strategy: str | None) -> str | None:
    """The legacy worker module (relative path) the launch's strategy uses, or None when the
    launch runs the engine workers (or the strategy has no legacy module in this tree)."""
    name = "megatron_workers.py" if strategy == "megatron" else "fsdp_workers.py"
    path = os.path.join(root, "workers", name)
    if not os.path.isfile(path):
        return None
    switch = engine_switch(root)
    if switch is not None:
        key, values, default = switch
        value = view.value(key)
        if value is None:
            value = default
        if not isinstance(value, str | int | bool) or value in values:
            return None
    return _rel(root, path)


# ----------------------------------------------------------------------------
# legacy worker normalization
# ----------------------------------------------------------------------------


@dataclass
class Normalized:
    worker: str  # "actor/rollout", "ref", "critic"
    path: str  # the worker module, relative to the verl package
    failure: Failure | None
    assigned: list[Assigned] = field(default_factory=list)


class _Layout:
    """The calls of a worker constructor that decide its layout: `mpu.initialize_model_parallel`
    (the sizes it asks for, remembered) and `mpu.get_data_parallel_world_size` (world // them)."""

    SIZES = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size")

    def __init__(self, world: V, sizes: dict | None = None):
        self.world = world
        self.sizes = sizes

    def initialize(self, ev: Evaluator, args: list, kwargs: dict) -> V:
        self.sizes = {k: v for k, v in kwargs.items() if k in self.SIZES}
        return V(None)

    def data_parallel(self, ev: Evaluator, args: list, kwargs: dict) -> V:
        if not self.sizes or self.world.value is UNKNOWN:
            return V(UNKNOWN)
        product, keys = 1, list(self.world.keys)
        for name in self.SIZES:
            v = self.sizes.get(name, V(1))
            if not isinstance(v.value, int) or isinstance(v.value, bool) or v.value < 1:
                return V(UNKNOWN)
            product *= v.value
            keys.extend(k for k in v.keys if k not in keys)
        return V(self.world.value // product, tuple(keys))


def _init_of(tree: ast.Module, class_name: str):
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return node, _class_methods(tree, node).get("__init__")
    return None, None


@kept_reading(lambda root, rel, class_name: (os.path.join(root, rel),))
def _init_span(root: str, rel: str, class_name: str) -> Span | None:
    """Where the `__init__` a worker class of module `rel` runs stands (its own, or a base's in the
    module): the workers module (thousands of lines) is parsed once per machine, the __init__
    alone each process."""
    path = os.path.join(root, rel)
    tree = parse_file(path)
    _, init = _init_of(tree, class_name) if tree is not None else (None, None)
    return Span.of(path, init) if init is not None else None


def normalization(view, root: str, roles: list[tuple[str, str, str, str]]) -> list[Normalized]:
    """Run each legacy worker constructor verl builds for the launch. `roles`: (worker label,
    class name, config prefix, role argument) with the worker module chosen by the section's
    strategy; a worker whose launch runs the engine workers is skipped."""
    out = []
    world = world_size(view)
    for label, class_name, prefix, role in roles:
        section = prefix if prefix == "critic" else f"{ARF}.actor"
        rel = legacy_workers(view, root, view.value(f"{section}.strategy"))
        if rel is None:
            continue
        init = statement_at(_init_span(root, rel, class_name))
        if init is None:
            continue
        layout = _Layout(world)
        calls = {
            "torch.distributed.is_initialized": False,
            "torch.distributed.get_world_size": given(world),
            "self.device_mesh.size": given(world),
            "mpu.initialize_model_parallel": layout.initialize,
            "mpu.get_data_parallel_world_size": layout.data_parallel,
        }
        ev = Evaluator(view, calls=calls)
        params = {}
        for i, arg in enumerate(init.args.args):
            if i == 0:
                params[arg.arg] = V(Obj({}))
            elif arg.arg == "config":
                params[arg.arg] = V(Node(ev, prefix))
            elif arg.arg == "role":
                params[arg.arg] = V(role)
            else:
                params[arg.arg] = V(UNKNOWN)
        ev.run(init.body, params)
        out.append(Normalized(label, rel, ev.failures[0] if ev.failures else None, list(ev.assigned)))
    return out


# ----------------------------------------------------------------------------
# engine workers
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineAsserts:
    mini_split: Cite | None  # assert mini_batch_size % data parallel size == 0
    micro_split: Cite | None  # assert a GPU's batch % micro batch size == 0 (dynamic batch size off)
    mini_batch: Span | None  # the trainer's `_update_actor`, which hands update_actor the mini batch
    trainer_at: Cite | None


@kept
def engine_asserts(root: str) -> EngineAsserts | None:
    """The engine workers' batch split asserts; None for a tree without engine workers."""
    path = os.path.join(root, "workers", "engine_workers.py")
    tree = parse_file(path)
    if tree is None:
        return None
    mini = micro = None
    for node in walk(tree):
        if isinstance(node, ast.Assert):
            text = ast.unparse(node.test)
            if "mini_batch_size %" in text and "get_data_parallel_size()" in text:
                mini = Cite(_rel(root, path), node.lineno)
    upath = os.path.join(root, "workers", "engine", "utils.py")
    utree = parse_file(upath)
    for node in walk(utree) if utree is not None else ():
        if isinstance(node, ast.Assert):
            text = ast.unparse(node.test)
            if "micro_batch_size_per_gpu" in text and "%" in text:
                micro = Cite(_rel(root, upath), node.lineno)
    func, at = _trainer_mini_batch(root)
    return EngineAsserts(mini, micro, func, at)


def _trainer_mini_batch(root: str):
    """Where the trainer's `_update_actor` function stands, and where it passes `mini_batch_size=`."""
    path = os.path.join(root, *TRAINER)
    tree = parse_file(path)
    if tree is None:
        return None, None
    for node in walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "_update_actor":
            for sub in walk(node):
                if isinstance(sub, ast.Call):
                    for kw in sub.keywords:
                        if kw.arg == "mini_batch_size":
                            return Span.of(path, node), Cite(_rel(root, path), sub.lineno)
    return None, None


def trainer_mini_batch(view, root: str) -> V:
    """The mini batch (rows) the engine trainer hands update_actor, by running `_update_actor`."""
    facts = engine_asserts(root)
    if facts is None or facts.mini_batch is None:
        return V(UNKNOWN)
    func = statement_at(facts.mini_batch)
    if func is None:
        return V(UNKNOWN)
    ev = Evaluator(view)
    me = Obj({"config": V(Node(ev, ""))}, pinned=frozenset({"config"}))
    ev.run(func.body, {func.args.args[0].arg: V(me), **{a.arg: V(UNKNOWN) for a in func.args.args[1:]}})
    for sub in walk(func):
        if isinstance(sub, ast.Call):
            for kw in sub.keywords:
                if kw.arg == "mini_batch_size":
                    return ev.value(kw.value, ev.scope)
    return V(UNKNOWN)


def _engine_function(root: str, sub: str, name: str):
    return statement_at(_function_span(os.path.join(root, "workers", "engine", sub, "transformer_impl.py"), name))


def engine_data_parallel(view, root: str, section: str) -> V:
    """The data-parallel size of a section's engine (`get_data_parallel_size` of its engine
    class, run): FSDP world // Ulysses SP, Megatron world // (TP x PP x CP)."""
    strategy = view.value(f"{section}.strategy")
    sub = "megatron" if strategy == "megatron" else "fsdp"
    func = _engine_function(root, sub, "get_data_parallel_size")
    if func is None:
        return V(UNKNOWN)
    world = world_size(view)
    engine_key = f"{section}.megatron" if sub == "megatron" else f"{section}.fsdp_config"
    sp, sp_key = ulysses_size(view, section)
    ev = Evaluator(view)
    layout = _Layout(world, {k: ev.config(f"{section}.megatron.{k}") for k in _Layout.SIZES})
    ev.calls = {
        "torch.distributed.get_world_size": given(world),
        "mpu.get_data_parallel_world_size": layout.data_parallel,
    }
    me = Obj(
        {
            "engine_config": V(Node(ev, engine_key)),
            "ulysses_sequence_parallel_size": V(sp if sp is not None else UNKNOWN, (sp_key,)),
        }
    )
    return ev.returned(func, {func.args.args[0].arg: V(me)})


# ----------------------------------------------------------------------------
# dispatch
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Split:
    rows: int  # the rows the generation step hands over
    parts: str  # "world" (the worker group's ranks) or a config key (rollout.agent.num_workers)
    at: Cite  # where the split happens
    check: Cite  # DataProto.chunk's equal-split assert
    padding_env: str | None  # the environment variable that turns on padding instead
    call: Cite | None = None  # the trainer's generate_sequences call


@kept  # parses one module of verl's: once per machine, not once per run
def _chunk_assert(root: str):
    path = os.path.join(root, "protocol.py")
    tree = parse_file(path)
    if tree is None:
        return None, None
    check = env = None
    for node in walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "DataProto":
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and method.name == "chunk":
                    for sub in walk(method):
                        if isinstance(sub, ast.Assert) and "% chunks" in ast.unparse(sub.test):
                            check = Cite(_rel(root, path), sub.lineno)
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.getenv", "os.environ.get") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and "PADDING" in first.value:
                env = first.value
    return check, env


@kept  # parses the trainer: once per machine; the statements found are parsed again alone
def _async_mode_sites(root: str) -> tuple:
    """((line, the assignment, (the `if` statements around it, outermost last)), ...) of the
    trainer's assignments to `self.async_rollout_mode`, in file order, as spans."""
    path = os.path.join(root, *TRAINER)
    tree = parse_file(path)
    if tree is None:
        return ()
    parents = _parents(tree)
    out = []
    for node in walk(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        if ast.unparse(node.targets[0]) != "self.async_rollout_mode":
            continue
        tests, parent = [], parents.get(node)
        while parent is not None and not isinstance(parent, ast.FunctionDef):
            if isinstance(parent, ast.If):
                tests.append(Span.of(path, parent))
            parent = parents.get(parent)
        out.append((node.lineno, Span.of(path, node), tuple(tests)))
    return tuple(sorted(out, key=lambda t: t[0]))


def _trainer_scope(ev: Evaluator) -> dict:
    """The names of a trainer method: `self` (its config the launch's) and `config`."""
    me = Obj({"config": V(Node(ev, ""))}, pinned=frozenset({"config"}))
    return ev.bind_scope({"self": V(me), "config": V(Node(ev, ""))})


def _async_mode(view, root: str):
    """The trainer's `self.async_rollout_mode`, from its assignments and the `if` tests around them."""
    value = UNKNOWN
    for _, assign, ifs in _async_mode_sites(root):
        stmts = [statement_at(span) for span in (assign, *ifs)]
        if None in stmts:
            return UNKNOWN
        expr, tests = stmts[0].value, [stmt.test for stmt in stmts[1:]]
        ev = Evaluator(view)
        scope = _trainer_scope(ev)
        holds = True
        for test in tests:
            truth = ev.truth(test, scope)
            if truth is UNKNOWN:
                return UNKNOWN
            holds = holds and truth
        if holds:
            value = ev.value(expr, scope).value
    return value


@memo(limit=16)
def _enum_constants(root: str) -> dict:
    """{class name: Obj of its constant attributes} for the enum classes the trainer imports
    from verl (`AdvantageEstimator.REMAX` is "remax")."""
    return {name: V(Obj({k: V(v) for k, v in attrs.items()})) for name, attrs in _trainer_enums(root).items()}


@kept  # parses the trainer and the modules it imports enums from: once per machine
def _trainer_enums(root: str) -> dict:
    """{class name: {attribute: constant}} of the enum classes ray_trainer.py imports from verl."""
    tree = parse_file(os.path.join(root, *TRAINER))
    out: dict = {}
    for node, mod, _ in verl_imports(root, tree, "class") if tree is not None else ():
        classes = {c.name: c for c in mod.body if isinstance(c, ast.ClassDef)}
        for alias in node.names:
            cls = classes.get(alias.name)
            if cls is None or not any(ast.unparse(b).endswith("Enum") for b in cls.bases):
                continue
            attrs = {}
            for stmt in cls.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                    for t in stmt.targets:
                        if isinstance(t, ast.Name):
                            attrs[t.id] = stmt.value.value
            out[alias.asname or alias.name] = attrs
    return out


class _Rows:
    """A batch of the trainer's step, by its number of rows."""

    def __init__(self, n):
        self.n = n


def generation_split(view, root: str) -> Split | None:
    """What the launch's generation step splits evenly, and into what (see the module doc):
    the trainer's `fit` is followed from the dataloader's batch to the generate_sequences call
    the launch takes, counting rows (`repeat`, `concat`, `slice`)."""
    check, env = _chunk_assert(root)
    if check is None:
        return None
    path = os.path.join(root, *TRAINER)
    fit = _fit(root)
    train = view.int_value("data.train_batch_size")
    if fit is None or not train:
        return None
    async_mode = _async_mode(view, root)
    ev = Evaluator(view)
    me = Obj({"config": V(Node(ev, "")), "async_rollout_mode": V(async_mode)}, pinned=frozenset({"config"}))
    scope = ev.bind_scope({"self": V(me), **_enum_constants(root)})
    found = _walk_rows(ev, scope, fit.body, train)
    if found is None:
        return None
    owner, rows, line = found
    at = Cite(_rel(root, path), line)
    if owner == "self.actor_rollout_wg":
        method = _dispatch_of(view, root)
        return Split(rows, "world", method, check, env, at) if method is not None else None
    manager = _agent_loop_split(root)
    if manager is None:
        return None
    return Split(rows, manager[0], manager[1], check, env, at)


def _fit(root: str):
    return statement_at(_function_span(os.path.join(root, *TRAINER), "fit"))


def validation_only(view, root: str) -> Cite | None:
    """Where the trainer's fit returns after its first validation (`if
    self.config.trainer.get("val_only", False): return`, verl 0.4-0.9) when this launch turns
    trainer.val_only on: no training step runs (no actor update, no log-prob or critic pass);
    None when it trains, or when the version's fit has no such return. A return inside the
    test of val_before_train is taken only when that is not off."""
    found = _val_only_return(root)
    if found is None or view.value("trainer.val_only") is not True:
        return None
    line, under_val_before_train = found
    if under_val_before_train and view.value("trainer.val_before_train") is False:
        return None
    return Cite(_rel(root, os.path.join(root, *TRAINER)), line)


def _val_only_return(root: str) -> tuple[int, bool] | None:
    """(line, whether it is inside a test of val_before_train) of fit's `if ...val_only...: return`."""
    fit = _fit(root)
    if fit is None:
        return None
    stack = [(stmt, False) for stmt in fit.body]
    while stack:
        node, inside = stack.pop()
        if isinstance(node, ast.If):
            test = ast.unparse(node.test)
            if "val_only" in test and any(isinstance(s, ast.Return) for s in node.body):
                return node.lineno, inside
            inside = inside or "val_before_train" in test
            stack.extend((s, inside) for s in node.body + node.orelse)
        elif isinstance(node, (ast.With, ast.Try)):
            stack.extend((s, inside) for s in node.body)
    return None


def _walk_rows(ev: Evaluator, scope: dict, body: list, train: int):
    """(owner, rows, line) of the first generate_sequences call reached, following `if` tests the
    evaluator decides; None when one it cannot decide stands in the way."""
    for stmt in body:
        call = _generate_call(stmt)
        if call is not None:
            arg = call.args[0]
            rows = scope.get(arg.id) if isinstance(arg, ast.Name) else None
            if not isinstance(rows, _Rows):
                return None
            return ast.unparse(call.func.value), rows.n, call.lineno
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target = stmt.target
        if isinstance(target, ast.Name):
            rows = _rows_of(ev, scope, stmt.value, train)
            ev.let(scope, target.id, V(_Rows(rows)) if rows is not None else ev.value(stmt.value, scope))
        elif isinstance(stmt, ast.If):
            truth = ev.truth(stmt.test, scope)
            if truth is UNKNOWN:
                if _contains_generate(stmt):
                    return None
                ev.havoc([stmt], scope, ev.module)
                continue
            found = _walk_rows(ev, scope, stmt.body if truth else stmt.orelse, train)
            if found is not None:
                return found
        elif isinstance(stmt, ast.For | ast.With | ast.While | ast.Try):
            found = _walk_rows(ev, scope, stmt.body, train)
            if found is not None:
                return found
    return None


def _generate_call(stmt) -> ast.Call | None:
    value = stmt.value if isinstance(stmt, ast.Assign | ast.Expr) else None
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "generate_sequences"
        and value.args
    ):
        return value
    return None


def _contains_generate(node) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "generate_sequences"
        for n in walk(node)
    )


def _rows_of(ev: Evaluator, scope: dict, expr: ast.expr, train: int):
    """Rows of a DataProto expression of the trainer's step, or None when it is not one."""
    if isinstance(expr, ast.Name):
        v = scope.get(expr.id)
        return v.n if isinstance(v, _Rows) else None
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    name = ast.unparse(func)
    if name.endswith("from_single_dict"):
        return train
    if isinstance(func, ast.Attribute) and func.attr == "repeat":
        base = _rows_of(ev, scope, func.value, train)
        times = next((k.value for k in expr.keywords if k.arg == "repeat_times"), expr.args[0] if expr.args else None)
        n = ev.value(times, scope).value if times is not None else UNKNOWN
        return base * n if base is not None and isinstance(n, int) and not isinstance(n, bool) else None
    if isinstance(func, ast.Attribute) and func.attr in ("slice", "select", "pop"):
        return _rows_of(ev, scope, func.value, train)
    if name.endswith("concat") and expr.args and isinstance(expr.args[0], ast.List):
        parts = [_rows_of(ev, scope, e, train) for e in expr.args[0].elts]
        return sum(parts) if parts and None not in parts else None
    if "gen_batch" in name and len(expr.args) == 1:  # self._get_gen_batch(batch): the same rows
        return _rows_of(ev, scope, expr.args[0], train)
    return None


def _dispatch_of(view, root: str) -> Cite | None:
    """The worker's generate_sequences when its dispatch mode splits over every rank."""
    rel = legacy_workers(view, root, view.value(f"{ARF}.actor.strategy"))
    return None if rel is None else _generate_dispatch(root, rel)


@kept  # parses one module of verl's: once per machine, not once per run
def _generate_dispatch(root: str, rel: str) -> Cite | None:
    tree = parse_file(os.path.join(root, rel))
    for node in walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == "generate_sequences":
            for deco in node.decorator_list:
                if "Dispatch.DP_COMPUTE_PROTO" in ast.unparse(deco):
                    return Cite(rel, node.lineno)
    return None


@kept  # parses one module of verl's: once per machine, not once per run
def _agent_loop_split(root: str):
    """(config key of the number of agent loop workers, Cite of the chunk) or None."""
    path = os.path.join(root, "experimental", "agent_loop", "agent_loop.py")
    tree = parse_file(path)
    if tree is None:
        return None
    at = key = None
    for node in walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "chunk":
            if node.args and "agent_loop_workers" in ast.unparse(node.args[0]):
                at = Cite(_rel(root, path), node.lineno)
        if isinstance(node, ast.Assign) and ast.unparse(node.value).endswith("agent.num_workers"):
            key = f"{ARF}.rollout.agent.num_workers"
    return (key, at) if at is not None and key is not None else None


# ----------------------------------------------------------------------------
# the training step's split over data-parallel ranks
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainSplit:
    ranks: V  # the data-parallel ranks the actor's batches are split over
    check: Cite  # the equal-split assert
    padding_env: str | None  # the variable that pads instead (DataProto only)
    validated: Cite | None  # validate_config's own check of the same split, when it runs for this launch


@kept  # parses one module of verl's: once per machine, not once per run
def _tensordict_chunk_assert(root: str) -> Cite | None:
    path = os.path.join(root, "utils", "tensordict_utils.py")
    tree = parse_file(path)
    for node in walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == "chunk_tensordict":
            for sub in walk(node):
                if isinstance(sub, ast.Assert) and "% chunks" in ast.unparse(sub.test):
                    return Cite(_rel(root, path), sub.lineno)
    return None


@memo(limit=8)
def _validate_sites(root: str) -> tuple:
    """(Cite, ((test, in its body?), ...)) of validate_config's `real_train_batch_size % minimal_bsz`
    assert (verl 0.9.1 utils/config.py; v0.4.1 RayPPOTrainer._validate_config), or None."""
    for parts in (("utils", "config.py"), TRAINER):
        path = os.path.join(root, *parts)
        tree = parse_file(path)
        if tree is None:
            continue
        parents = _parents(tree)
        for node in walk(tree):
            if not (isinstance(node, ast.Assert) and "real_train_batch_size %" in ast.unparse(node.test)):
                continue
            tests, child, parent = [], node, parents.get(node)
            while parent is not None and not isinstance(parent, ast.FunctionDef):
                if isinstance(parent, ast.If):
                    tests.append((parent.test, child in parent.body))
                child, parent = parent, parents.get(parent)
            return Cite(_rel(root, path), node.lineno), tuple(tests)
    return None


def _validated(view, root: str) -> Cite | None:
    """validate_config's own check of the training split, when the `if` tests around it hold."""
    site = _validate_sites(root)
    if site is None:
        return None
    cite, tests = site
    ev = Evaluator(view)
    scope = _trainer_scope(ev)
    for test, in_body in tests:
        truth = ev.truth(test, scope)
        if truth is UNKNOWN or bool(truth) != in_body:
            return None
    return cite


def training_split(view, root: str) -> TrainSplit | None:
    """How the actor's training batches (train_batch_size x rollout.n rows) are split over ranks."""
    section = f"{ARF}.actor"
    validated = _validated(view, root)
    world = world_size(view)
    rel = legacy_workers(view, root, view.value(f"{section}.strategy"))
    check, env = _chunk_assert(root)
    if rel is not None:
        if check is None:
            return None
        if view.value(f"{section}.strategy") == "megatron":
            ranks = megatron_ranks(view, section)
            if ranks is None:
                return None
        else:
            ranks = world
        return TrainSplit(ranks, check, env, validated)
    td = _tensordict_chunk_assert(root)
    if td is None:
        return None
    return TrainSplit(engine_data_parallel(view, root, section), td, None, validated)


def megatron_ranks(view, section: str) -> V | None:
    """The data-parallel ranks of a section's legacy Megatron worker: world // (TP x PP x CP); None
    when a size is not known or the layout does not divide the world (the parallelism rule's)."""
    world = world_size(view)
    sizes = [view.int_value(f"{section}.megatron.{k}") for k in _Layout.SIZES]
    if world.value is UNKNOWN or None in sizes or min(sizes) < 1:
        return None
    if world.value % (sizes[0] * sizes[1] * sizes[2]):
        return None
    keys = (*world.keys, *(f"{section}.megatron.{k}" for k in ("tensor_model_parallel_size",)))
    return V(world.value // (sizes[0] * sizes[1] * sizes[2]), keys)


# ----------------------------------------------------------------------------
# a legacy Megatron worker's update: a rank's batch in mini batches
# ----------------------------------------------------------------------------

UPDATE_FILES = {
    "actor": ("workers", "actor", "megatron_actor.py"),
    "critic": ("workers", "critic", "megatron_critic.py"),
}


@dataclass(frozen=True)
class MiniBatches:
    """How a legacy Megatron worker's update iterates its rank's batch: in mini batches of the
    normalized ppo_mini_batch_size (`data.make_iterator(mini_batch_size=...)`), which
    `DataProto.make_iterator` asserts divide the batch."""

    call: Cite  # the worker's make_iterator(mini_batch_size=...) call
    check: Cite  # DataProto.make_iterator's assert
    iterator: Span  # DataProto.make_iterator, evaluated


@kept
def mini_batches(root: str, role: str) -> MiniBatches | None:
    """The update's mini batch iteration of the role ("actor", "critic"); None where its module has
    no make_iterator call or DataProto.make_iterator no such assert."""
    path = os.path.join(root, *UPDATE_FILES[role])
    tree = parse_file(path)
    call = next((n for n in walk(tree) if _iterates_mini_batches(n)), None) if tree is not None else None
    iterator = _data_proto_method(root, "make_iterator")
    if call is None or iterator is None:
        return None
    check = next(
        (n for n in walk(iterator) if isinstance(n, ast.Assert) and "% mini_batch_size" in ast.unparse(n.test)),
        None,
    )
    if check is None:
        return None
    at = Span.of(os.path.join(root, "protocol.py"), iterator)
    return MiniBatches(Cite(_rel(root, path), call.lineno), Cite("protocol.py", check.lineno), at)


def _iterates_mini_batches(node) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "make_iterator"
        and any(k.arg == "mini_batch_size" for k in node.keywords)
    )


def _data_proto_method(root: str, name: str):
    tree = parse_file(os.path.join(root, "protocol.py"))
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == "DataProto":
            return next((m for m in node.body if isinstance(m, ast.FunctionDef) and m.name == name), None)
    return None


def mini_batch_failure(view, facts: MiniBatches, rows: V, mini: V) -> Failure | None:
    """What DataProto.make_iterator raises for a batch of `rows` samples in mini batches of `mini`."""
    ev = Evaluator(view, module="verl.protocol")
    batch = Obj({"batch_size": V([rows.value], rows.keys)})
    iterator = statement_at(facts.iterator)
    if iterator is None:
        return None
    params = {a.arg: V(UNKNOWN) for a in iterator.args.args}
    params[iterator.args.args[0].arg] = V(Obj({"batch": V(batch)}))
    params["mini_batch_size"] = mini
    ev.run(iterator.body, params)
    return ev.failures[0] if ev.failures else None


# ----------------------------------------------------------------------------
# a legacy Megatron worker's micro batches
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MicroBatching:
    """A step of the legacy Megatron actor that runs the pipeline schedule over micro batches: the
    worker method, the config key of its micro batch size (`data.meta_info["micro_batch_size"]`)
    and where it sets it."""

    method: str  # compute_log_prob, update_actor
    key: str
    at: Cite


@kept
def micro_batching(root: str, rel: str) -> tuple:
    """(MicroBatching, ...) of ActorRolloutRefWorker's log-prob and update steps in the worker
    module `rel`, when the actor splits a batch by that size and hands the count to Megatron's
    schedule (megatron_actor.py forward_backward_batch); () otherwise."""
    actor = parse_file(os.path.join(root, *UPDATE_FILES["actor"]))
    backward = _function_of(actor, "forward_backward_batch")
    text = ast.unparse(backward) if backward is not None else ""
    if "split(micro_batch_size)" not in text or "get_forward_backward_func()" not in text:
        return ()
    tree = parse_file(os.path.join(root, rel))
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ActorRolloutRefWorker"), None)
    methods = _class_methods(tree, cls) if cls is not None else {}
    out = []
    for name in ("compute_log_prob", "update_actor"):
        found = _micro_batch_key(methods.get(name))
        if found is not None:
            out.append(MicroBatching(name, found[0], Cite(rel, found[1])))
    return tuple(out)


def _function_of(tree, name: str):
    for node in walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


@kept  # parses the module once per machine; a check parses the function alone (statement_at)
def _function_span(path: str, name: str) -> Span | None:
    """Where the module's first function `name` (in walk order) stands."""
    node = _function_of(parse_file(path), name)
    return Span.of(path, node) if node is not None else None


def _micro_batch_key(method):
    """(config key, line) of `data.meta_info["micro_batch_size"] = self.config.x.y` in a worker method
    (directly or through a local name)."""
    names: dict = {}
    for node in walk(method) if method is not None else ():
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name):
            names[target.id] = value
        elif ast.unparse(target).endswith('meta_info["micro_batch_size"]') or ast.unparse(target).endswith(
            "meta_info['micro_batch_size']"
        ):
            value = names.get(value.id, value) if isinstance(value, ast.Name) else value
            text = ast.unparse(value)
            if text.startswith("self.config."):
                return f"{ARF}.{text[len('self.config.'):]}", node.lineno
    return None


# ----------------------------------------------------------------------------
# the Megatron engine's per-token loss
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PerTokenLoss:
    """The Megatron engine's checks on a micro batch's loss when Megatron computes it per token
    (`if self.tf_config.calculate_per_token_loss and loss_function is not None:` in
    `postprocess_micro_batch_func`, workers/engine/megatron/transformer_impl.py)."""

    block: Span  # the `if` statement
    at: Cite


@kept
def per_token_loss(root: str) -> PerTokenLoss | None:
    """The engine's per-token loss block; None where the version's engine has none that raises."""
    path = os.path.join(root, "workers", "engine", "megatron", "transformer_impl.py")
    tree = parse_file(path)
    funcs = [n for n in walk(tree) if isinstance(n, ast.FunctionDef)] if tree is not None else []
    blocks = [walk(f) for f in funcs if f.name == "postprocess_micro_batch_func"]
    for node in (n for nodes in blocks for n in nodes):
        if (
            isinstance(node, ast.If)
            and "calculate_per_token_loss" in ast.unparse(node.test)
            and any(isinstance(n, ast.Raise) for n in walk(node))
        ):
            return PerTokenLoss(Span.of(path, node), Cite(_rel(root, path), node.lineno))
    return None


def per_token_loss_failure(view, facts: PerTokenLoss, section: str) -> Failure | None:
    """What the block raises for the section's training loss (its config `loss_function` is bound
    to, its engine config) with Megatron computing the loss per token."""
    ev = Evaluator(view, module="verl.workers.engine.megatron.transformer_impl")
    tf_config = Obj({"calculate_per_token_loss": True}, complete=False)
    me = Obj({"tf_config": V(tf_config), "engine_config": V(Node(ev, f"{section}.megatron"))}, complete=False)
    loss_function = Obj({"keywords": {"config": Node(ev, section)}}, complete=False)
    params = {"self": V(me), "loss_function": V(loss_function), "forward_only": V(False)}
    block = statement_at(facts.block)
    if block is None:
        return None
    ev.run([block], {**{n: V(UNKNOWN) for n in ("data", "output", "local_cp_size")}, **params})
    return ev.failures[0] if ev.failures else None


def ulysses_size(view, section: str) -> tuple[int | None, str]:
    """(Ulysses sequence parallel size, the key it comes from) of a section such as
    `actor_rollout_ref.actor` or `critic`: its own size when above 1 (verl copies the deprecated
    section-level size into the engine's fsdp_config), else its fsdp_config's; 1 when neither
    is set; None when one is not known statically."""
    keys = [f"{section}.ulysses_sequence_parallel_size", f"{section}.fsdp_config.ulysses_sequence_parallel_size"]
    if section == "critic":
        keys.append("critic.model.fsdp_config.ulysses_sequence_parallel_size")
    for key in keys:
        value = view.value(key)
        if value is None:
            continue
        size = view.int_value(key)
        if size is None:
            return None, key
        if size > 1:
            return size, key
    return 1, keys[0]
