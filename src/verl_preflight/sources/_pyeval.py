"""Evaluate verl's own Python over a launch's config: read with `ast`, never imported or run.

verl decides at start what a launch may be in a small part of Python: its config
checks (`validate_config`, `RayPPOTrainer._validate_config`, the config
dataclasses' `__post_init__`), the worker constructors that normalize batch sizes,
the code that builds vLLM's engine arguments. `Evaluator` runs such code over the
launch's effective config (`rules.view.LaunchView`), one semantics for all of it:

- The subset: assignments, `if`, `for` over a known list, `with`, `assert`,
  `raise`, `return`, `try` without handlers, nested `def`, arithmetic,
  comparisons, f-strings, the builtins of `_BUILTINS`, methods of plain values,
  `.get` on the config, and the code the caller lets it follow (below).
- Unknowns: a value the launch does not fix (a call outside what is followed, a
  name bound by a statement not followed) is UNKNOWN. A test on it takes neither
  branch and what either branch assigns becomes unknown (havoc), as does what any
  statement outside the subset assigns; an assert on it passes; arithmetic on it is
  unknown. An unknown never turns into a failure.
- Failures (`Failure`): an assert that is false, a `raise` reached, Python's own
  TypeError or ZeroDivisionError on known values, with verl's message where it is
  known. By default the first one ends the run, as it ends verl's; with `go_on` the
  run reports every failure as a linter does: a `raise` ends the `if` block or the
  function it is in, an assert is passed over, and the config keys the failure read
  are poisoned (unknown from then on: their mistake is reported once).
- Taint: every value carries the config keys it was computed from (those read while
  computing it, and those of the `if` tests it is assigned under), so a failure or
  a value can be reported at the override that decides it (`V`: a value and its keys).
- The config: a `Node` is a section of the launch's config; the code's writes go to
  an overlay (each one recorded in `assigned`), never to the launch.
- Budget: counted statements (`max_steps`) and nested calls (`max_depth`), never the
  clock.

What the caller decides (the options):
- `calls`: dotted call names whose value it gives (`torch.distributed.get_world_size`),
  a value or a function of (evaluator, arguments as V, keyword arguments as V);
- `sources`: where a free name is looked up and classes are read: verl's registry
  (`verl_classes.Registry`: functions, classes, constants, `super()`,
  `omega_conf_to_dataclass` building the dataclass and running its `__post_init__`),
  or `Functions` (a few function definitions by name); none: a free name is unknown;
- per object (`Obj`): its attributes, which keep the caller's value (`pinned`), which
  methods are followed (`methods`, or its verl class and `follow`);
- `go_on`, `capture` (call or dict nodes whose arguments to record), the budget.
"""

from __future__ import annotations

import abc
import ast
import collections.abc
import operator
import re
from dataclasses import dataclass, field

from ._pyast import dotted

UNKNOWN = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN", "__bool__": None})()
MISSING = "???"  # OmegaConf's mandatory value: reading it raises, verl's checks never compare it


@dataclass
class V:
    """A value and the config keys it comes from."""

    value: object
    keys: tuple = ()


@dataclass
class Failure:
    """A check that fails: where in verl, what it says, the config keys behind it."""

    path: str  # the verl file, relative to the package (utils/config.py)
    line: int
    kind: str  # AssertionError, ValueError, TypeError, ZeroDivisionError, ...
    message: str | None  # as verl (or Python) prints it; None when not known
    source: str  # the failing statement's first line
    reads: list = field(default_factory=list)  # config keys read by it, then by the tests around it
    own: list = field(default_factory=list)  # the keys read by the failing statement itself
    role: tuple | None = None  # (role, keys) when the check runs because verl uses that role: the critic
    nulls: list = field(default_factory=list)  # keys among `reads` whose value is null
    allowed: tuple | None = None  # a test of one config value against constants: those constants
    text: str = ""  # always a text: the message with unknown parts as ?, or the failing statement

    @property
    def value_set(self) -> bool:
        """A value outside the set verl accepts (config-value's), not a relation of settings."""
        return self.allowed is not None

    @property
    def keys(self) -> list:
        return self.reads


@dataclass
class Assigned:
    """A config value the code rewrote (normalization): where, and what it became."""

    key: str
    value: object
    line: int
    keys: list


class _Stop(Exception):
    """The run ends: the budget is spent, or a failure ends it."""


class _Raised(Exception):
    """A `raise` was reached: unwinds to the enclosing `if` block or call."""


class _Break(Exception):
    """A `break` reached: unwinds to its loop."""


class _Continue(Exception):
    """A `continue` reached: unwinds to its loop's next turn."""


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class Node:
    """A section of the launch's config (`config.actor_rollout_ref.actor`)."""

    def __init__(self, ev: Evaluator, path: str):
        self.ev = ev
        self.path = path


class Obj:
    """An object of the code: `self` of a constructor, a model's hf_config, an instance of a
    verl class (a config dataclass built from a section, the trainer).

    attrs: attribute -> value, or V (a value and its keys); pinned: attributes that keep the
    caller's value when the code assigns them an unknown (the result of a call not followed);
    methods: its functions by name, or cls and module: its verl class, whose methods are looked
    up in its bases; follow: the names of the only methods followed (None: all); path: the config
    section it was built from; complete: an attribute it does not have is absent (hasattr is
    False), not unknown."""

    def __init__(
        self,
        attrs: dict | None = None,
        pinned: frozenset = frozenset(),
        methods: dict | None = None,
        cls: ast.ClassDef | None = None,
        module: str = "",
        path: str | None = None,
        follow: frozenset | None = None,
        complete: bool = True,
    ):
        self.fields: dict = {}
        self.taint: dict = {}  # attribute -> the config keys its value comes from
        for name, value in (attrs or {}).items():
            self.set(name, value)
        self.pinned = pinned
        self.methods = methods or {}
        self.cls = cls
        self.module = module
        self.path = path
        self.follow = follow
        self.complete = complete

    def set(self, name: str, value, taint: tuple = ()) -> None:
        if isinstance(value, V):
            value, taint = value.value, tuple(value.keys)
        self.fields[name] = value
        self.taint[name] = tuple(taint)


class Functions:
    """Sources for code read outside verl's registry: these function definitions by name, all
    taken as defined in `module`."""

    def __init__(self, functions: dict, module: str):
        self.functions = functions
        self.module = module

    def _lookup(self, module: str, name: str, seen: set):
        found = self.functions.get(name)
        return (self.module, name, found) if found is not None else None

    def _resolve_dotted(self, module: str, ref: str, seen: set | None = None):
        return None

    def field_types(self, qualname: str):
        return None


@dataclass
class _Function:
    node: ast.FunctionDef
    module: str  # the module it is defined in
    closure: dict = field(default_factory=dict)
    bound: object = None  # `self` for a method
    owner: tuple | None = None  # (ClassDef, module) that defines the method: what super() starts from


@dataclass
class _Class:
    node: ast.ClassDef
    module: str


@dataclass
class _Guard:
    """An `if` test around the statement being evaluated: the keys it read, and the branch taken."""

    reads: list
    test: ast.expr
    taken: bool


class _Frame:
    """One call being evaluated: whether a statement of it was not followed (then a call that
    ends without `return` gives UNKNOWN, not None)."""

    def __init__(self, guards: int = 0):
        self.skipped = False
        self.guards = guards  # the guards around the call: the callee's own start after them


class Evaluator:
    """Evaluates verl's code over one launch's config (module docstring)."""

    def __init__(
        self,
        view,
        calls: dict | None = None,
        functions: dict | None = None,
        sources=None,
        module: str = "",
        go_on: bool = False,
        max_steps: int = 5000,
        max_depth: int = 4,
        capture=(),
        watch=None,
    ):
        self.view = view
        self.calls = calls or {}  # dotted call name -> value, or callable(evaluator, args, kwargs) -> V
        self.sources = Functions(functions, module) if functions is not None else sources
        self.module = module  # the module of the statements `run` is given
        self.go_on = go_on
        self.max_steps = max_steps
        self.max_depth = max_depth
        self.capture = set(capture)  # Call or Dict nodes whose arguments to record when evaluated
        self.captured: dict = {}  # node -> {keyword: V}
        self.steps = 0
        self.depth = 0
        self.reads: list[str] = []
        self.guards: list[_Guard] = []  # the `if` tests around the statement, outermost first
        self.failures: list[Failure] = []
        self.poisoned: set[str] = set()
        self.written: dict = {}  # config path -> (value, keys): the overlay of the code's writes
        self.assigned: list[Assigned] = []
        self.built: set[str] = set()  # config sections built into dataclasses
        self.frames: list[_Frame] = []
        self.lost_jump = False  # a `break` or `continue` of the loop being followed was not followed
        self.statement = 0  # where the reads of the statement being evaluated start
        self.compared: dict = {}  # id(Compare) -> the constants one value was compared with
        self.scope: dict = {}  # the names of the last `run`
        # watch(node, scope, module, reached): called for the statements in `watch.nodes` when one
        # is about to run (reached) or is passed over unfollowed (an unknown `if`, a `try`)
        self.watch = watch

    # ---- entry -------------------------------------------------------------------

    def run(self, body: list, params: dict) -> None:
        """Run statements with these names bound (name -> V); the failures met are in `failures`."""
        self.scope = self.bind_scope(params)
        self.frames.append(_Frame(len(self.guards)))
        try:
            self.block(body, self.scope, self.module)
        except (_Stop, _Return, _Raised, RecursionError):
            pass
        finally:
            self.frames.pop()

    def call_def(self, module: str, fn: ast.FunctionDef, args: list, bound=None, owner=None, taints=None,
                 kwargs=None, kwtaints=None):
        """Evaluate `fn(*args, **kwargs)` (a method when `bound`); its value, UNKNOWN when the run ends."""
        try:
            return self.invoke(_Function(fn, module, bound=bound, owner=owner), args, kwargs or {}, taints, kwtaints)
        except (_Stop, _Return, _Raised, RecursionError):
            return UNKNOWN

    def returned(self, func: ast.FunctionDef, params: dict) -> V:
        """The value a function returns with these parameters (name -> V), and its keys; UNKNOWN
        when it fails or ends without one."""
        scope = self.bind_scope(params)
        start = len(self.reads)
        self.frames.append(_Frame(len(self.guards)))
        try:
            self.block(func.body, scope, self.module)
        except _Return as ret:
            return self.tainted(ret.value, start)
        except (_Stop, _Raised, RecursionError):
            pass
        finally:
            self.frames.pop()
        return V(UNKNOWN)

    def bind_scope(self, params: dict) -> dict:
        scope: dict = {_TAINT: {}}
        for name, v in params.items():
            v = v if isinstance(v, V) else V(v)
            scope[name] = v.value
            scope[_TAINT][name] = tuple(v.keys)
        return scope

    @property
    def locals(self) -> dict:
        """The names of the last `run`, as V."""
        taint = self.scope.get(_TAINT, {})
        return {n: V(v, taint.get(n, ())) for n, v in self.scope.items() if n != _TAINT}

    def value(self, node: ast.expr, scope: dict) -> V:
        """An expression's value and the config keys read for it; UNKNOWN when the run ends."""
        start = len(self.reads)
        try:
            return self.tainted(self.expr(node, scope, self.module), start)
        except (_Stop, _Return, _Raised, RecursionError):
            return V(UNKNOWN)

    def truth(self, node: ast.expr, scope: dict):
        """True, False or UNKNOWN."""
        return _truth(self.value(node, scope).value)

    def let(self, scope: dict, name: str, v: V) -> None:
        """Bind a name of `scope` to a value and its keys, as an assignment does."""
        self.assign(ast.Name(id=name, ctx=ast.Store()), v.value, scope, self.module, v.keys)

    def tainted(self, value, start: int) -> V:
        return V(value, tuple(dict.fromkeys(self.reads[start:])))

    def read(self, path: str) -> None:
        self.reads.append(path)

    def poisoned_at(self, path: str) -> bool:
        return path in self.poisoned

    # ---- the config ----------------------------------------------------------------

    def config(self, path: str) -> V:
        """The launch's value at `path` as the code sees it (its overlay first), and its keys."""
        parent, _, name = path.rpartition(".")
        start = len(self.reads)
        return self.tainted(self.child(Node(self, parent), name), start)

    def child(self, owner: Node, name: str, default=UNKNOWN, strict: bool = True):
        """The value at `name` below a config node: a Node for a mapping, a plain value, or
        UNKNOWN. `strict`: a missing key is UNKNOWN (attribute access raises in OmegaConf's
        struct mode, which verl's checks never rely on); else `default` (`.get`)."""
        path = f"{owner.path}.{name}" if owner.path else name
        if path in self.written:
            return self.overlaid(path)
        if self.poisoned_at(path):
            return UNKNOWN
        view = self.view
        node, setting = view.raw(path), view.setting(path)
        if node is None and setting is None:
            present = view.raw(owner.path) if owner.path else view.tree
            if isinstance(present, dict) and name not in present:
                return UNKNOWN if strict else default
        if isinstance(node, dict) and setting is None:
            return Node(self, path)
        self.read(path)
        for source in _interpolation_sources(node if setting is None else None):
            if self.poisoned_at(source):
                return UNKNOWN
            self.read(source)
        value = view.value(path)
        return None if value is None else _plain(value)

    def overlaid(self, path: str):
        value, keys = self.written[path]
        if any(self.poisoned_at(k) for k in keys if k != path):
            return UNKNOWN
        self.reads.extend(keys)
        return value

    def write(self, owner: Node, name: str, value, taint: tuple, line: int | None) -> None:
        """The code sets a config key (`config.x.y = v`): later reads see it; a node replaced by
        an unknown makes what is below it unknown too."""
        path = f"{owner.path}.{name}" if owner.path else name
        keys = tuple(taint) if path in taint else (*taint, path)
        self.written[path] = (value, keys)
        for key in list(self.written):
            if key.startswith(path + "."):
                del self.written[key]
        if value is UNKNOWN:
            self.poisoned.add(path)
        if line is not None:
            self.assigned.append(Assigned(path, value, line, list(keys)))

    # ---- statements --------------------------------------------------------------

    def invoke(self, fn: _Function, args: list, kwargs: dict, taints=None, kwtaints=None):
        """Call a function of the code: its parameters bound, its body run, its value."""
        if self.depth >= self.max_depth:
            return UNKNOWN
        if self.unfollowed(fn):
            if self.frames:
                self.frames[-1].skipped = True
            return UNKNOWN
        scope = self.parameters(fn, args, kwargs, list(taints or []), kwtaints or {})
        frame = _Frame(len(self.guards))
        self.frames.append(frame)
        self.depth += 1
        try:
            self.block(fn.node.body, scope, fn.module)
        except _Return as ret:
            return ret.value
        except _Raised:
            return UNKNOWN  # the failure is recorded; the caller goes on
        finally:
            self.depth -= 1
            self.frames.pop()
        return UNKNOWN if frame.skipped else None

    def unfollowed(self, fn: _Function) -> bool:
        """A method of an object whose methods are followed only by name, not among them."""
        owner = fn.bound
        return isinstance(owner, Obj) and owner.follow is not None and self.depth > 0 and fn.node.name not in owner.follow

    def parameters(self, fn: _Function, args: list, kwargs: dict, taints: list, kwtaints: dict) -> dict:
        """The callee's scope: its closure, `__class__` for super(), the parameters bound."""
        node = fn.node
        scope = dict(fn.closure)
        taint = scope[_TAINT] = dict(fn.closure.get(_TAINT, {}))
        if fn.owner is not None:
            scope["__class__"] = fn.owner
        params = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
        if fn.bound is not None:
            args, taints = [fn.bound, *args], [(), *taints]
        defaults = node.args.defaults
        for i, name in enumerate(params):
            if i < len(args):
                scope[name] = args[i]
                taint[name] = taints[i] if i < len(taints) else ()
            elif name in kwargs:
                scope[name] = kwargs[name]
                taint[name] = kwtaints.get(name, ())
            else:
                k = i - (len(params) - len(defaults))
                scope[name] = self.expr(defaults[k], scope, fn.module) if k >= 0 else UNKNOWN
        for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True):
            if arg.arg in kwargs:
                scope[arg.arg] = kwargs[arg.arg]
                taint[arg.arg] = kwtaints.get(arg.arg, ())
            else:
                scope[arg.arg] = self.expr(default, scope, fn.module) if default is not None else UNKNOWN
        for rest in (node.args.vararg, node.args.kwarg):
            if rest is not None:
                scope[rest.arg] = UNKNOWN
        return scope

    def block(self, body: list, scope: dict, module: str) -> None:
        for stmt in body:
            self.stmt(stmt, scope, module)

    def stmt(self, node: ast.stmt, scope: dict, module: str) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise _Stop
        self.statement = len(self.reads)
        if self.watch is not None and node in self.watch.nodes:
            self.watch(node, scope, module, True)
        handler = _STATEMENTS.get(type(node))
        if handler is None:  # try with handlers, while, match, ...: not followed
            self.havoc([node], scope, module)
        else:
            handler(self, node, scope, module)

    def statement_taint(self) -> list:
        return self.reads[self.statement :]

    def expr_stmt(self, node: ast.Expr, scope: dict, module: str) -> None:
        self.expr(node.value, scope, module)

    def assign_stmt(self, node: ast.Assign, scope: dict, module: str) -> None:
        value = self.expr(node.value, scope, module)
        for target in node.targets:
            self.assign(target, value, scope, module, self.statement_taint(), node.lineno)

    def annassign_stmt(self, node: ast.AnnAssign, scope: dict, module: str) -> None:
        if node.value is not None:
            value = self.expr(node.value, scope, module)
            self.assign(node.target, value, scope, module, self.statement_taint(), node.lineno)

    def augassign_stmt(self, node: ast.AugAssign, scope: dict, module: str) -> None:
        current = self.expr(node.target, scope, module)
        value = self.binop(node, node.op, current, self.expr(node.value, scope, module), module)
        self.assign(node.target, value, scope, module, self.statement_taint(), node.lineno)

    def if_stmt(self, node: ast.If, scope: dict, module: str) -> None:
        start = len(self.reads)
        test = _truth(self.expr(node.test, scope, module))
        if test is UNKNOWN:
            self.havoc(node.body + node.orelse, scope, module)
            return  # neither branch: an unknown never turns into a failure
        self.guards.append(_Guard(self.reads[start:], node.test, bool(test)))
        try:
            self.block(node.body if test else node.orelse, scope, module)
        except _Raised:
            pass  # the failure is recorded; the checks after this `if` still run
        finally:
            self.guards.pop()

    def assert_stmt(self, node: ast.Assert, scope: dict, module: str) -> None:
        start = len(self.reads)
        if _truth(self.expr(node.test, scope, module)) is False:
            message = self.message(node.msg, scope, module)
            text = message[1] if message[1] is not None else f"assert {ast.unparse(node.test)}"
            self.fail(node, module, "AssertionError", message[0], start, node.test, text)

    def raise_stmt(self, node: ast.Raise, scope: dict, module: str) -> None:
        start = len(self.reads)
        kind, (message, shown) = self.exception(node.exc, scope, module)
        self.fail(node, module, kind, message, start, None, shown if shown is not None else ast.unparse(node))
        raise _Raised

    def return_stmt(self, node: ast.Return, scope: dict, module: str) -> None:
        raise _Return(self.expr(node.value, scope, module) if node.value is not None else None)

    def def_stmt(self, node: ast.FunctionDef, scope: dict, module: str) -> None:
        scope[node.name] = _Function(node, module, closure=scope)

    def for_stmt(self, node: ast.For, scope: dict, module: str) -> None:
        """A `for` over a known list, turn by turn, with `break`, `continue` and `else` as CPython
        runs them. Not followed (the loop's target and all its body and `else` assign become
        unknown): a loop over an unknown, one of more than _MAX_TURNS turns, and one whose turns
        became unknown on the way (`lost_jump`: a `break` under an unknown test), after that turn."""
        items = self.expr(node.iter, scope, module)
        if isinstance(items, dict):
            items = list(items)
        if not isinstance(items, list | tuple | range | str) or len(items) > _MAX_TURNS:
            self.havoc([node], scope, module)
            return
        outer, self.lost_jump = self.lost_jump, False
        lost = False
        try:
            for item in items:
                self.assign(node.target, item, scope, module)
                try:
                    self.block(node.body, scope, module)
                except _Continue:
                    pass
                except _Break:
                    return  # (no `else`)
                if self.lost_jump:
                    lost = True
                    break
        finally:
            self.lost_jump = outer
        if lost:
            self.havoc([node], scope, module)  # (an `else` that jumps in the loop around: lost there)
            return
        self.block(node.orelse, scope, module)

    def break_stmt(self, node: ast.Break, scope: dict, module: str) -> None:
        raise _Break

    def continue_stmt(self, node: ast.Continue, scope: dict, module: str) -> None:
        raise _Continue

    def with_stmt(self, node: ast.With, scope: dict, module: str) -> None:
        for item in node.items:
            self.expr(item.context_expr, scope, module)
            if item.optional_vars is not None:
                self.forget(item.optional_vars, scope, module)
        self.block(node.body, scope, module)

    def try_stmt(self, node: ast.Try, scope: dict, module: str) -> None:
        if node.handlers or node.orelse:
            self.havoc([node], scope, module)
            return
        failed = len(self.failures)
        try:
            self.block(node.body, scope, module)
        except (_Break, _Continue, _Return, _Raised):
            self.block(node.finalbody, scope, module)  # `finally` runs on the way out, as CPython's
            raise
        except _Stop:
            if len(self.failures) == failed or not node.finalbody:
                raise  # the budget, or nothing to run on the way out
            first = self.failures[failed:]  # the failure that ends the run runs `finally` first:
            del self.failures[failed:]  # a failure there replaces it, a jump out of it drops it
            self.block(node.finalbody, scope, module)
            self.failures[failed:failed] = first
            raise
        self.block(node.finalbody, scope, module)

    def nothing(self, node: ast.stmt, scope: dict, module: str) -> None:
        return  # pass, import, global, nonlocal

    def import_from(self, node: ast.ImportFrom, scope: dict, module: str) -> None:
        """`from verl.x import f` inside a function: the name is verl's `f`."""
        if node.level:
            base = module.split(".")[: -node.level]
            target = ".".join([*base, node.module] if node.module else base)
        else:
            target = node.module or ""
        for alias in node.names:
            found = self.lookup(target, alias.name) if target.startswith("verl") else None
            scope[alias.asname or alias.name] = self.definition(found)

    def havoc(self, stmts: list, scope: dict, module: str) -> None:
        """Statements not followed: every name and field they may assign becomes unknown."""
        if self.frames:
            self.frames[-1].skipped = True
        for stmt in stmts:
            for node, targets, handler in _havoc_walk(stmt):
                if self.watch is not None and node in self.watch.nodes:
                    self.watch(node, scope, module, False)
                for target in targets:
                    self.forget(target, scope, module)
                if handler:
                    scope[node.name] = UNKNOWN
        if _jumps(stmts):  # a `break` or `continue` not followed: the loop's turns are unknown
            self.lost_jump = True

    def forget(self, target, scope: dict, module: str) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = UNKNOWN
        elif isinstance(target, ast.Tuple | ast.List):
            for t in target.elts:
                self.forget(t, scope, module)
        elif isinstance(target, ast.Attribute | ast.Subscript):
            try:
                self.assign(target, UNKNOWN, scope, module)
            except (_Raised, _Return):
                pass

    # ---- assignment ----------------------------------------------------------------

    def assign(self, target, value, scope: dict, module: str, taint=(), line: int | None = None) -> None:
        """Bind `target` to `value`; `taint`: the config keys the value was computed from (and the
        tests of the `if`s it is assigned under: `if adv == "gae": use_critic = True`); `line`:
        where a config write is recorded (None: a write of havoc, not recorded)."""
        base = self.frames[-1].guards if self.frames else 0
        under = [k for g in self.guards[base:] for k in g.reads]
        taint = tuple(dict.fromkeys([*under, *taint])) if _plain_value(value) or value is None else ()
        if isinstance(target, ast.Name):
            scope[target.id] = value
            scope.setdefault(_TAINT, {})[target.id] = taint
        elif isinstance(target, ast.Tuple | ast.List):
            self.unpack(target, value, scope, module, taint)
        elif isinstance(target, ast.Attribute):
            self.assign_attribute(target, value, scope, module, taint, line)
        elif isinstance(target, ast.Subscript):
            self.assign_item(target, value, scope, module, taint, line)

    def unpack(self, target, value, scope: dict, module: str, taint: tuple) -> None:
        items = list(value) if isinstance(value, list | tuple) else None
        if items is not None and len(items) == len(target.elts):
            for t, v in zip(target.elts, items, strict=True):
                self.assign(t, v, scope, module, taint)
        else:
            for t in target.elts:
                self.assign(t, UNKNOWN, scope, module)

    def assign_attribute(self, target: ast.Attribute, value, scope: dict, module: str, taint, line) -> None:
        owner = self.expr(target.value, scope, module)
        if isinstance(owner, Obj):
            if not (target.attr in owner.pinned and value is UNKNOWN):
                owner.set(target.attr, value, taint)
        elif isinstance(owner, Node):
            self.write(owner, target.attr, value, taint, line)

    def assign_item(self, target: ast.Subscript, value, scope: dict, module: str, taint, line) -> None:
        owner = self.expr(target.value, scope, module)
        key = self.expr(target.slice, scope, module)
        if isinstance(owner, Node):
            if isinstance(key, str):
                self.write(owner, key, value, taint, line)
            else:
                self.poisoned.add(owner.path)
        elif isinstance(owner, dict | list) and key is not UNKNOWN:
            try:
                owner[key] = value
            except (TypeError, IndexError):
                pass

    # ---- failures ------------------------------------------------------------------

    def fail(self, node, module: str, kind: str, message, start: int, test, text: str) -> None:
        """Record a failure. Its own keys: what the failing statement read and, for a `raise`,
        the tests of the `if` / `elif` chain that led to it; the outer tests' keys are its
        context. `test`: the failing assert's test. The first failure ends the run unless `go_on`."""
        guards = list(self.guards)
        chain = _chain(guards) if isinstance(node, ast.Raise) else []
        del guards[len(guards) - len(chain) :]
        own = list(dict.fromkeys([k for g in chain for k in g.reads] + self.reads[start:]))
        context = [p for guard in guards for p in guard.reads if p not in own]
        path = "/".join(module.split(".")[1:]) + ".py"
        shown = message if isinstance(message, str) else None
        if any((f.path, f.line, f.message) == (path, node.lineno, shown) for f in self.failures):
            return  # met again (a loop, a second call): one failure
        reads = own + list(dict.fromkeys(context))
        nulls = [k for k in own if _is_null(self.view, k)]
        source = ast.unparse(node).splitlines()[0]
        failure = Failure(path, node.lineno, kind, shown, source, reads=reads, own=own, nulls=nulls, text=text)
        if len(own) == 1:
            tests = [g.test for g in chain] if chain else [test]
            failure.allowed = self.value_set(tests)
        self.failures.append(failure)
        self.poisoned.update(own)  # the keys of the failing test: their mistake is reported once
        if not self.go_on:
            raise _Stop

    def python_error(self, node, module: str, err: Exception, operands: tuple) -> None:
        """Python's own error on known values (`None < 3`, `x % 0`): verl's too."""
        if isinstance(err, ZeroDivisionError):
            text = f"{ast.unparse(node)}: division by zero"
        elif None in operands:
            text = f"{ast.unparse(node)}: an operand is None"
        else:
            text = f"{ast.unparse(node)}: {err}"
        self.fail(node, module, type(err).__name__, str(err), self.statement, None, text)

    def value_set(self, tests: list) -> tuple | None:
        """The constants the failing tests compared one value with (`x not in VALUES`,
        `if x == A: ... elif x in (B, C): ... else: raise`), else None."""
        values: list = []
        for test in tests:
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test = test.operand
            found = self.compared.get(id(test)) if isinstance(test, ast.Compare) else None
            if found is None:
                return None
            values.extend(v for v in found if v not in values)
        return tuple(values) or None

    def exception(self, exc, scope: dict, module: str):
        """(kind, (message, text)) of a raised exception."""
        if isinstance(exc, ast.Call):
            name = exc.func.id if isinstance(exc.func, ast.Name) else getattr(exc.func, "attr", "Exception")
            return name, self.message(exc.args[0] if exc.args else None, scope, module)
        if isinstance(exc, ast.Name):
            return exc.id, (None, None)
        return "Exception", (None, None)

    def message(self, node, scope: dict, module: str):
        """(verl's message as it prints it, or None when a part is not known; the message with
        the parts not known as ? and blanks folded, or None when it is not a string)."""
        if node is None:
            return None, None
        if isinstance(node, ast.JoinedStr):
            parts = [self.shown_part(part, scope, module) for part in node.values]
            exact = None if any(p[0] is UNKNOWN for p in parts) else "".join(p[0] for p in parts)
            return exact, _folded("".join(p[1] for p in parts))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            (left, left_shown), (right, right_shown) = (self.message(n, scope, module) for n in (node.left, node.right))
            exact = left + right if isinstance(left, str) and isinstance(right, str) else None
            shown = left_shown + right_shown if left_shown is not None and right_shown is not None else None
            return exact, shown
        value = self.expr(node, scope, module)
        if not isinstance(value, str):
            return None, None
        return value, _folded(value)

    def shown_part(self, part, scope: dict, module: str):
        """(the part as the f-string prints it or UNKNOWN, the part as shown: ? when not known)."""
        if isinstance(part, ast.Constant):
            return str(part.value), str(part.value)
        value = self.expr(part.value, scope, module)
        if value is UNKNOWN or not (_plain_value(value) or value is None):
            return UNKNOWN, "?"
        exact = self.formatted(part, value, scope, module)
        return exact, str(value)

    # ---- expressions -------------------------------------------------------------

    def expr(self, node, scope: dict, module: str):
        if node is None:
            return None
        handler = _EXPRESSIONS.get(type(node))
        return UNKNOWN if handler is None else handler(self, node, scope, module)

    def constant(self, node: ast.Constant, scope: dict, module: str):
        return node.value

    def name_expr(self, node: ast.Name, scope: dict, module: str):
        return self.name(node.id, scope, module)

    def attribute_expr(self, node: ast.Attribute, scope: dict, module: str):
        return self.attribute(self.expr(node.value, scope, module), node.attr)

    def binop_expr(self, node: ast.BinOp, scope: dict, module: str):
        left = self.expr(node.left, scope, module)
        return self.binop(node, node.op, left, self.expr(node.right, scope, module), module)

    def unary(self, node: ast.UnaryOp, scope: dict, module: str):
        value = self.expr(node.operand, scope, module)
        if isinstance(node.op, ast.Not):
            truth = _truth(value)
            return UNKNOWN if truth is UNKNOWN else not truth
        if not isinstance(value, int | float) or isinstance(node.op, ast.Invert):
            return UNKNOWN
        return -value if isinstance(node.op, ast.USub) else value

    def ifexp(self, node: ast.IfExp, scope: dict, module: str):
        test = _truth(self.expr(node.test, scope, module))
        if test is UNKNOWN:
            return UNKNOWN
        return self.expr(node.body if test else node.orelse, scope, module)

    def formatted_value(self, node: ast.FormattedValue, scope: dict, module: str):
        return self.expr(node.value, scope, module)

    def sequence(self, node, scope: dict, module: str):
        items = [self.expr(e, scope, module) for e in node.elts]
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return UNKNOWN
        if isinstance(node, ast.Set):
            return set(items) if all(_hashable(i) for i in items) else UNKNOWN
        return tuple(items) if isinstance(node, ast.Tuple) else items

    def dict_expr(self, node: ast.Dict, scope: dict, module: str):
        keys = [self.expr(k, scope, module) for k in node.keys]
        values, taints = [], []
        for v in node.values:
            start = len(self.reads)
            values.append(self.expr(v, scope, module))
            taints.append(self.reads[start:])
        if node in self.capture:
            self.captured[node] = {
                k: V(v, tuple(dict.fromkeys(t))) for k, v, t in zip(keys, values, taints, strict=True) if isinstance(k, str)
            }
        if any(k is UNKNOWN or k is None or not _hashable(k) for k in keys):
            return UNKNOWN
        return dict(zip(keys, values, strict=True))

    def subscript(self, node: ast.Subscript, scope: dict, module: str):
        owner = self.expr(node.value, scope, module)
        key = self.expr(node.slice, scope, module)
        if isinstance(owner, Node) and isinstance(key, str):
            return self.child(owner, key)
        if isinstance(owner, Obj) and owner.path is not None and isinstance(key, str):
            return owner.fields.get(key, UNKNOWN)
        if isinstance(owner, dict | list | tuple | str) and key is not UNKNOWN and _hashable(key):
            try:
                return owner[key]
            except (KeyError, IndexError, TypeError):
                return UNKNOWN
        return UNKNOWN

    def binop(self, node, op, left, right, module: str):
        if left is UNKNOWN or right is UNKNOWN or type(op) not in _BINOPS:
            return UNKNOWN
        if not ((_plain_value(left) or left is None) and (_plain_value(right) or right is None)):
            return UNKNOWN
        if isinstance(op, ast.Pow) and (not isinstance(right, int) or abs(right) > 64):
            return UNKNOWN
        if isinstance(op, ast.Mult) and (isinstance(left, str | list) or isinstance(right, str | list)):
            count = right if isinstance(left, str | list) else left
            if not isinstance(count, int) or count > 10_000:
                return UNKNOWN
        if not _fits(op, left, right):  # the value would pass the size budget: never built
            return UNKNOWN
        try:
            return _BINOPS[type(op)](left, right)
        except (TypeError, ZeroDivisionError) as err:  # Python's own error on known values: verl's too
            self.python_error(node, module, err, (left, right))
            return UNKNOWN
        except (ValueError, OverflowError):
            return UNKNOWN

    def compare(self, node: ast.Compare, scope: dict, module: str):
        left = self.expr(node.left, scope, module)
        if len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn | ast.Eq | ast.NotEq):
            right = self.expr(node.comparators[0], scope, module)
            if isinstance(right, list | tuple | set | frozenset) and right and all(_plain_value(v) for v in right):
                self.compared[id(node)] = tuple(right)
            elif isinstance(right, str) and isinstance(node.ops[0], ast.Eq | ast.NotEq):
                self.compared[id(node)] = (right,)
            return self.compare_one(node, node.ops[0], left, right, module)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.expr(right_node, scope, module)
            result = self.compare_one(node, op, left, right, module)
            if result is not True:
                return result
            left = right
        return True

    def compare_one(self, node, op, left, right, module: str):
        if isinstance(op, ast.Is | ast.IsNot):
            return _identity(op, left, right)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        if isinstance(op, ast.In | ast.NotIn):
            return _membership(op, left, right)
        if not (_plain_value(left) or left is None) or not (_plain_value(right) or right is None):
            return UNKNOWN
        try:
            return _COMPARES[type(op)](left, right)
        except TypeError as err:  # `None < 3`: Python's error on known values, verl's too
            if isinstance(op, ast.Eq | ast.NotEq):
                return UNKNOWN
            self.python_error(node, module, err, (left, right))
            return UNKNOWN

    def boolop(self, node: ast.BoolOp, scope: dict, module: str):
        is_and = isinstance(node.op, ast.And)
        result = True if is_and else False
        for i, value_node in enumerate(node.values):
            value = self.expr(value_node, scope, module)
            truth = _truth(value)
            if truth is UNKNOWN:
                # `a and b` with `a` unknown: unknown, unless a later operand decides it
                rest = [_truth(self.expr(v, scope, module)) for v in node.values[i + 1 :]]
                if is_and and False in rest:
                    return False
                if not is_and and True in rest:
                    return True
                return UNKNOWN
            if truth is not is_and:
                return value
            result = value
        return result

    def fstring(self, node: ast.JoinedStr, scope: dict, module: str):
        out = []
        for part in node.values:
            value = self.expr(part, scope, module)
            if value is UNKNOWN or not (_plain_value(value) or value is None):
                return UNKNOWN
            if isinstance(part, ast.FormattedValue):
                value = self.formatted(part, value, scope, module)
                if value is UNKNOWN:
                    return UNKNOWN
            out.append(value)
        return "".join(out)

    def formatted(self, part: ast.FormattedValue, value, scope: dict, module: str):
        """A known value as the f-string prints it (its format spec applied), or UNKNOWN."""
        if part.format_spec is None:
            return str(value)
        spec = self.expr(part.format_spec, scope, module)
        if isinstance(spec, str) and not _widths_fit(spec):
            return UNKNOWN
        try:
            return format(value, spec) if isinstance(spec, str) else str(value)
        except (TypeError, ValueError):
            return UNKNOWN

    def name(self, name: str, scope: dict, module: str):
        if name in scope:
            taint = scope.get(_TAINT, {}).get(name, ())
            if any(self.poisoned_at(k) for k in taint):
                return UNKNOWN  # computed from a key whose mistake is already reported
            self.reads.extend(taint)
            return scope[name]
        if name in _BUILTINS:
            return _BUILTINS[name]
        return self.definition(self.lookup(module, name))

    def lookup(self, module: str, name: str):
        return self.sources._lookup(module, name, set()) if self.sources is not None else None

    def definition(self, found):
        """A name's value from its definition in the sources: a function, a class, a constant."""
        if found is None:
            return UNKNOWN
        where, _, node = found
        if isinstance(node, ast.FunctionDef):
            return _Function(node, where)
        if isinstance(node, ast.ClassDef):
            return _Class(node, where)
        if isinstance(node, ast.Constant | ast.List | ast.Tuple | ast.Set | ast.Dict):
            return self.expr(node, {}, where)
        return UNKNOWN

    # ---- attributes and objects ------------------------------------------------------

    def attribute(self, owner, attr: str):
        if owner is UNKNOWN:
            return UNKNOWN
        if isinstance(owner, Node):
            if attr in ("get", "keys", "values", "items"):
                return _Method(owner, attr)
            return self.child(owner, attr)
        if isinstance(owner, Obj):
            return self.obj_attribute(owner, attr)
        if isinstance(owner, _Class):
            return self.class_attribute(owner, attr)
        if isinstance(owner, dict) and attr in ("get", "keys", "values", "items"):
            return _Method(owner, attr)
        if isinstance(owner, str) and attr in _STR_METHODS:
            return _Method(owner, attr)
        return UNKNOWN

    def obj_attribute(self, owner: Obj, attr: str):
        if attr in owner.fields:
            return self.field(owner, attr)
        if attr == "get" and owner.path is not None:
            return _Method(owner, "get")
        method = self.method_of(owner, attr)
        if method is None:
            return UNKNOWN
        fn, where, cls = method
        owned = (cls, where) if cls is not None else None
        if _is_static(fn):
            return _Function(fn, where, owner=owned)
        return _Function(fn, where, bound=owner, owner=owned)

    def class_attribute(self, owner: _Class, attr: str):
        for stmt in owner.node.body:  # an enum member or a class constant
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
                return self.expr(stmt.value, {}, owner.module)
            if isinstance(stmt, ast.FunctionDef) and stmt.name == attr and _is_static(stmt):
                return _Function(stmt, owner.module, owner=(owner.node, owner.module))
        return UNKNOWN

    def field(self, owner: Obj, attr: str):
        """An attribute of an object, with the config keys its value comes from."""
        taint = owner.taint.get(attr, ())
        if any(self.poisoned_at(k) for k in taint):
            return UNKNOWN
        self.reads.extend(taint)
        return owner.fields[attr]

    def method_of(self, owner: Obj, name: str):
        """(FunctionDef, module, defining class or None) of an object's method, or None."""
        if name in owner.methods:
            return owner.methods[name], owner.module, None
        return self.method(owner.cls, owner.module, name) if owner.cls is not None else None

    def method(self, cls: ast.ClassDef, module: str, name: str):
        """(FunctionDef, module, defining class) of `name` in the class or its bases (in the sources)."""
        for klass, where in self.mro(cls, module):
            for stmt in klass.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                    return stmt, where, klass
        return None

    def mro(self, cls: ast.ClassDef, module: str, seen: set | None = None):
        """The class and its bases in the sources, depth first."""
        seen = set() if seen is None else seen
        if (module, cls.name) in seen:
            return
        seen.add((module, cls.name))
        yield cls, module
        for base in cls.bases:
            found = self.resolve_dotted(module, ast.unparse(base))
            if found is not None and isinstance(found[2], ast.ClassDef):
                yield from self.mro(found[2], found[0], seen)

    def resolve_dotted(self, module: str, ref: str):
        return self.sources._resolve_dotted(module, ref) if self.sources is not None else None

    def class_binds(self, cls: ast.ClassDef, module: str, name: str) -> bool:
        """Whether the class or a base (in the sources, or any base outside them) defines `name`."""
        for klass, where in self.mro(cls, module):
            if _defines(klass, name):
                return True
            for base in klass.bases:
                ref = ast.unparse(base)
                found = self.resolve_dotted(where, ref)
                if found is not None and isinstance(found[2], ast.ClassDef):
                    continue
                known = _OUTSIDE_BASES.get(ref)
                if known is None or hasattr(known, name):
                    return True  # a base from outside the sources that may define it
        return False

    def has_no(self, owner: Obj, name: str) -> bool:
        """Whether the object surely has no attribute `name`: it is complete and neither it nor
        its class binds it."""
        if not owner.complete:
            return False
        return owner.cls is None or not self.class_binds(owner.cls, owner.module, name)

    # ---- calls ---------------------------------------------------------------------

    def call_expr(self, node: ast.Call, scope: dict, module: str):
        func_node = node.func
        given = self.calls.get(dotted(func_node)) if self.calls else None  # (the keys are dotted names)
        if given is not None:
            return self.given_call(given, node, scope, module)
        if isinstance(func_node, ast.Attribute) and func_node.attr in _SILENT:
            return None  # logger.warning, warnings.warn, print-like: nothing to check
        if _is_super_call(func_node):
            return self.super_call(node, scope, module)
        func = self.expr(func_node, scope, module)
        args, taints, kwargs, kwtaints = self.arguments(node, scope, module)
        if node in self.capture:
            self.captured[node] = {k: V(v, tuple(dict.fromkeys(kwtaints[k]))) for k, v in kwargs.items()}
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return UNKNOWN
        return self.apply(func, args, taints, kwargs, kwtaints)

    def arguments(self, node: ast.Call, scope: dict, module: str):
        """(args, their keys, kwargs, their keys) of a call, evaluated in order."""
        args, taints, kwargs, kwtaints = [], [], {}, {}
        for a in node.args:
            start = len(self.reads)
            args.append(UNKNOWN if isinstance(a, ast.Starred) else self.expr(a, scope, module))
            taints.append(tuple(self.reads[start:]))
        for k in node.keywords:
            start = len(self.reads)
            value = self.expr(k.value, scope, module)
            if k.arg is not None:
                kwargs[k.arg], kwtaints[k.arg] = value, tuple(self.reads[start:])
        return args, taints, kwargs, kwtaints

    def given_call(self, given, node: ast.Call, scope: dict, module: str):
        """A call whose value the caller gives: a value, or its function of the arguments."""
        if not callable(given):
            return given
        args, taints, kwargs, kwtaints = self.arguments(node, scope, module)
        result = given(
            self,
            [V(a, t) for a, t in zip(args, taints, strict=True)],
            {k: V(v, kwtaints[k]) for k, v in kwargs.items()},
        )
        self.reads.extend(result.keys)
        return result.value

    def apply(self, func, args: list, taints: list, kwargs: dict, kwtaints: dict):
        if isinstance(func, _Function):
            if func.node.name == "omega_conf_to_dataclass":
                target = kwargs.get("dataclass_type", args[1] if len(args) > 1 else None)
                return self.build(args[0] if args else UNKNOWN, target)
            return self.invoke(func, args, kwargs, taints, kwtaints)
        if isinstance(func, _Method):
            return func.call(args, self)
        if func in _GETATTR:
            return self.getattr_call(func, args)
        if func is print:
            return None
        if callable(func) and any(func is b for b in _BUILTINS.values()):
            if func is range and not _range_fits(args):
                return UNKNOWN
            if kwargs or any(not (_plain_value(a) or a is None) for a in args):
                return UNKNOWN
            try:
                return func(*args)
            except Exception:  # noqa: BLE001 (a builtin refused its arguments: not followed)
                return UNKNOWN
        return UNKNOWN

    def getattr_call(self, func, args: list):
        if len(args) < 2 or not isinstance(args[1], str):
            return UNKNOWN
        owner, name = args[0], args[1]
        if isinstance(owner, Obj):
            return self.getattr_obj(func, owner, name, args)
        if isinstance(owner, Node):
            value = self.child(owner, name, default=_ABSENT, strict=False)
            if func is hasattr:
                return UNKNOWN if value is UNKNOWN else value is not _ABSENT
            if value is _ABSENT:
                return args[2] if len(args) > 2 else UNKNOWN
            return value
        if owner is None and func is getattr and len(args) > 2:
            return args[2]
        return UNKNOWN

    def getattr_obj(self, func, owner: Obj, name: str, args: list):
        if name in owner.fields:
            return True if func is hasattr else self.field(owner, name)
        if not self.has_no(owner, name):
            return UNKNOWN  # the trainer, or a method / class attribute: not followed
        if func is hasattr:
            return False  # a built dataclass has its fields and what its classes define
        return args[2] if len(args) > 2 else UNKNOWN

    def super_call(self, node: ast.Call, scope: dict, module: str):
        """`super().method(args)` in a method: the next definition after the defining class."""
        this, owner = scope.get("self"), scope.get("__class__")
        if not isinstance(this, Obj) or not isinstance(owner, tuple):
            return UNKNOWN
        cls, where = owner
        args = [self.expr(a, scope, module) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, scope, module) for k in node.keywords if k.arg}
        for base, base_module in list(self.mro(cls, where))[1:]:
            hit = self.method(base, base_module, node.func.attr)
            if hit is not None:
                fn, fn_module, fn_cls = hit
                return self.invoke(_Function(fn, fn_module, bound=this, owner=(fn_cls, fn_module)), args, kwargs)
        return None if node.func.attr == "__post_init__" else UNKNOWN

    # ---- dataclasses built from the config -------------------------------------------------

    def build(self, node, dataclass_type):
        """omega_conf_to_dataclass(node): the dataclass its `_target_` (or `dataclass_type`)
        names, fields from the node (converted to the field's type as OmegaConf does), the rest
        from the class's defaults; its __post_init__ runs."""
        if not isinstance(node, Node):
            return UNKNOWN
        found = self.dataclass_of(node, dataclass_type)
        if found is None:
            return UNKNOWN
        cls, where = found
        obj = Obj(cls=cls, module=where, path=node.path)
        for name, annotation in (self.sources.field_types(f"{where}.{cls.name}") or {}).items():
            obj.set(name, *self.field_value(node, cls, where, name, annotation))
        del self.reads[self.statement :]  # building reads every field; a check reads what it uses
        self.built.add(node.path)
        post = self.method(cls, where, "__post_init__")
        if post is not None:
            fn, fn_module, fn_cls = post
            self.invoke(_Function(fn, fn_module, bound=obj, owner=(fn_cls, fn_module)), [], {})
        return obj

    def dataclass_of(self, node: Node, dataclass_type):
        """(ClassDef, module) of the dataclass a section is built into, or None."""
        if isinstance(dataclass_type, _Class):
            return dataclass_type.node, dataclass_type.module
        if dataclass_type is not None or self.sources is None:
            return None
        target = self.view.raw(f"{node.path}._target_")
        setting = self.view.setting(f"{node.path}._target_")
        if setting is not None:
            target = setting.value if isinstance(setting.value, str) else None
        if not isinstance(target, str) or not target.startswith("verl."):
            return None
        module, _, name = target.rpartition(".")
        found = self.lookup(module, name)
        if found is None or not isinstance(found[2], ast.ClassDef):
            return None
        return found[2], found[0]

    def field_value(self, node: Node, cls: ast.ClassDef, where: str, name: str, annotation: str):
        """(value, keys) of a dataclass field built from the section: the section's, or the default."""
        start = len(self.reads)
        present = self.child(node, name, default=_ABSENT, strict=False)
        taint = tuple(self.reads[start:]) or (f"{node.path}.{name}",)
        if present is _ABSENT:
            return self.default(cls, where, name), taint
        return _as_field_type(present, annotation), taint

    def default(self, cls: ast.ClassDef, module: str, name: str):
        for klass, _where in self.mro(cls, module):
            for stmt in klass.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
                    return stmt.value.value if isinstance(stmt.value, ast.Constant) else UNKNOWN
        return UNKNOWN


_STATEMENTS = {
    ast.Expr: Evaluator.expr_stmt,
    ast.Assign: Evaluator.assign_stmt,
    ast.AnnAssign: Evaluator.annassign_stmt,
    ast.AugAssign: Evaluator.augassign_stmt,
    ast.If: Evaluator.if_stmt,
    ast.Assert: Evaluator.assert_stmt,
    ast.Raise: Evaluator.raise_stmt,
    ast.Return: Evaluator.return_stmt,
    ast.FunctionDef: Evaluator.def_stmt,
    ast.For: Evaluator.for_stmt,
    ast.With: Evaluator.with_stmt,
    ast.Try: Evaluator.try_stmt,
    ast.Break: Evaluator.break_stmt,
    ast.Continue: Evaluator.continue_stmt,
    ast.ImportFrom: Evaluator.import_from,
    ast.Pass: Evaluator.nothing,
    ast.Import: Evaluator.nothing,
    ast.Global: Evaluator.nothing,
    ast.Nonlocal: Evaluator.nothing,
}

_EXPRESSIONS = {
    ast.Constant: Evaluator.constant,
    ast.Name: Evaluator.name_expr,
    ast.Attribute: Evaluator.attribute_expr,
    ast.Subscript: Evaluator.subscript,
    ast.BinOp: Evaluator.binop_expr,
    ast.UnaryOp: Evaluator.unary,
    ast.BoolOp: Evaluator.boolop,
    ast.Compare: Evaluator.compare,
    ast.IfExp: Evaluator.ifexp,
    ast.JoinedStr: Evaluator.fstring,
    ast.FormattedValue: Evaluator.formatted_value,
    ast.List: Evaluator.sequence,
    ast.Tuple: Evaluator.sequence,
    ast.Set: Evaluator.sequence,
    ast.Dict: Evaluator.dict_expr,
    ast.Call: Evaluator.call_expr,
}


class _Method:
    """A method of a plain value, a config node or a built section: get, keys, lower, ..."""

    def __init__(self, owner, name: str):
        self.owner = owner
        self.name = name

    def call(self, args: list, ev: Evaluator):
        owner = self.owner
        if isinstance(owner, Node):
            if self.name != "get" or not args or not isinstance(args[0], str):
                return UNKNOWN
            return ev.child(owner, args[0], default=args[1] if len(args) > 1 else None, strict=False)
        if isinstance(owner, Obj):
            if not args or not isinstance(args[0], str):
                return UNKNOWN
            return owner.fields.get(args[0], args[1] if len(args) > 1 else None)
        if any(a is UNKNOWN or not (_plain_value(a) or a is None) for a in args):
            return UNKNOWN
        if isinstance(owner, dict) and any(v is UNKNOWN for v in owner.values()) and self.name != "get":
            return UNKNOWN
        if isinstance(owner, str) and not _method_fits(owner, self.name, args):
            return UNKNOWN
        try:
            result = getattr(owner, self.name)(*args)
        except Exception:  # noqa: BLE001 (a method of a plain value refused its arguments)
            return UNKNOWN
        return list(result) if self.name in ("keys", "values", "items") else result


# ---- helpers --------------------------------------------------------------------------------

_ABSENT = object()
_TAINT = "\0taint"  # in a scope: name -> the config keys its value was computed from
_GETATTR = (getattr, hasattr)
# bases from outside verl that verl's config classes use, as Python has them (what they define)
_OUTSIDE_BASES = {
    "collections.abc.Mapping": collections.abc.Mapping,
    "Mapping": collections.abc.Mapping,
    "ABC": abc.ABC,
    "abc.ABC": abc.ABC,
    "object": object,
}
_INTERPOLATION = re.compile(r"\$\{(?:oc\.select:)?([\w.]+)")


_MAX_TURNS = 1000  # turns of a `for` followed; a longer loop is not followed (what it assigns is unknown)


def _jumps(body: list) -> bool:
    """Whether statements hold a `break` or `continue` of the loop around them (not one of a loop
    or a function inside them)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Break | ast.Continue):
            return True
        if isinstance(node, ast.For | ast.While | ast.AsyncFor | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            stack.extend(getattr(node, "orelse", []))  # (a loop's else belongs to the outer loop)
            continue
        stack.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt | ast.excepthandler | ast.match_case))
    return False


def _interpolation_sources(node) -> list[str]:
    """The keys a YAML interpolation (`${oc.select:a.b,1}`) takes its value from."""
    return _INTERPOLATION.findall(node) if isinstance(node, str) and "${" in node else []


def _plain(value):
    from ..values import Unknown

    if isinstance(value, Unknown):
        return UNKNOWN
    if isinstance(value, str) and ("${" in value or value == MISSING):
        return UNKNOWN  # an interpolation the view could not follow, or a mandatory value
    if isinstance(value, dict | list):
        return UNKNOWN  # a node the script replaced as a whole: not followed
    return value


def _chain(guards: list) -> list:
    """The `if` / `elif` tests that led to a `raise`: the innermost, and the `elif` chain above it
    while the path went through their `else` branches."""
    if not guards:
        return []
    out = [guards[-1]]
    i = len(guards) - 1
    while not guards[i].taken and i > 0 and not guards[i - 1].taken:
        i -= 1
        out.insert(0, guards[i])
    return out


def _havoc_walk(stmt) -> tuple:
    """The nodes of a statement as ast.walk gives them, each with what it assigns (_targets) and
    whether it is an `except ... as name`: once per statement, kept on the statement itself (it
    goes with its syntax tree, as parse_file lets the tree go)."""
    walk = getattr(stmt, "_havoc_walk", None)
    if walk is None:
        walk = stmt._havoc_walk = tuple(
            (node, tuple(_targets(node)), isinstance(node, ast.ExceptHandler) and bool(node.name))
            for node in ast.walk(stmt)
        )
    return walk


def _targets(node) -> list:
    """What a statement assigns (for havoc)."""
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.NamedExpr):
        return [node.target]
    if isinstance(node, ast.With):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    return []


def _defines(klass: ast.ClassDef, name: str) -> bool:
    for stmt in klass.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return True
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _identity(op, left, right):
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    if left is None or right is None or not _plain_value(left) or not _plain_value(right):
        same = left is right
    elif isinstance(left, bool) and isinstance(right, bool):
        same = left is right
    else:
        return UNKNOWN  # the identity of equal numbers or strings is Python's detail
    return same if isinstance(op, ast.Is) else not same


class Members:
    """A container the code builds whose membership is known in part: `present` are in it,
    `unsure` may be (added where the evaluation could not follow), any other value is not."""

    def __init__(self, present, unsure=()):
        self.present = frozenset(present)
        self.unsure = frozenset(unsure) - self.present


def _membership(op, left, right):
    if isinstance(right, Members):
        if not _hashable(left) or left in right.unsure:
            return UNKNOWN
        found = left in right.present
        return found if isinstance(op, ast.In) else not found
    if not isinstance(right, list | tuple | set | frozenset | dict | str | range):
        return UNKNOWN
    if not _plain_value(left) and left is not None:
        return UNKNOWN
    try:
        found = left in right
    except TypeError:
        return UNKNOWN
    return found if isinstance(op, ast.In) else not found


def _is_super_call(func) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )


def _is_static(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return value is not UNKNOWN


def _plain_value(value) -> bool:
    """A value Python can compute with here (not a config node, an object or UNKNOWN)."""
    if isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return all(_plain_value(v) or v is None for v in value)
    if isinstance(value, dict):
        return all((_plain_value(v) or v is None) for v in value.values())
    return False


def _truth(value):
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, Node | Obj | _Function | _Method | _Class):
        return True
    try:
        return bool(value)
    except Exception:  # noqa: BLE001
        return UNKNOWN


def _folded(text: str) -> str:
    return " ".join(text.split())


def _is_null(view, key: str) -> bool:
    s = view.setting(key)
    if s is not None:
        return s.value is None
    return view.raw(key) is None and view.value(key) is None and _present(view, key)


def _present(view, key: str) -> bool:
    parent, _, name = key.rpartition(".")
    node = view.raw(parent) if parent else view.tree
    return isinstance(node, dict) and name in node


def _as_field_type(value, annotation: str):
    """A config value as the dataclass field holds it after OmegaConf's merge: "8" for an
    `int` field is 8. A value OmegaConf cannot convert is left UNKNOWN here (its type error is
    another rule's finding, not a check of verl's)."""
    if value is UNKNOWN or value is None or not isinstance(value, str):
        return value
    kind = annotation.replace("Optional[", "").replace("]", "").replace(" | None", "").strip()
    if kind not in ("int", "float", "bool"):
        return value
    try:
        from omegaconf import BooleanNode, FloatNode, IntegerNode

        node = {"int": IntegerNode, "float": FloatNode, "bool": BooleanNode}[kind](value)
        return node._value()
    except Exception:  # noqa: BLE001 (omegaconf's ValidationError: the value does not convert)
        return UNKNOWN


# ---- the size budget: a value that would pass it is never built (it is UNKNOWN) ---------------

MAX_LENGTH = 1 << 20  # characters of a string, elements of a list, tuple, set or dict, items of a range
MAX_INT_BITS = 4096  # bits of an integer
_WIDTH = re.compile(r"\d+")


def _length(value) -> int | None:
    return len(value) if isinstance(value, str | list | tuple | set | frozenset | dict) else None


def _bits(value) -> int:
    return abs(value).bit_length() if isinstance(value, int) and not isinstance(value, bool) else 0


def _fits(op, left, right) -> bool:
    """Whether `left op right` stays within the budget, judged before it is computed."""
    if isinstance(op, ast.Add):
        if _length(left) is not None and _length(right) is not None:
            return _length(left) + _length(right) <= MAX_LENGTH
        return max(_bits(left), _bits(right)) < MAX_INT_BITS
    if isinstance(op, ast.Mult):
        if _length(left) is not None or _length(right) is not None:
            seq, count = (left, right) if _length(left) is not None else (right, left)
            return isinstance(count, int) and _length(seq) * max(count, 0) <= MAX_LENGTH
        return _bits(left) + _bits(right) <= MAX_INT_BITS
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and right > 0:
        return _bits(left) * right <= MAX_INT_BITS
    if isinstance(op, ast.Mod) and isinstance(left, str):  # `"%02000000000d" % 1`: its widths
        return "*" not in left and _widths_fit(left)
    return True


def _widths_fit(text: str) -> bool:
    """No number in a format (a width, a precision) asks for more than MAX_LENGTH characters."""
    return all(len(n) <= 7 and int(n) <= MAX_LENGTH for n in _WIDTH.findall(text))


def _method_fits(owner: str, name: str, args: list) -> bool:
    if name == "format":  # `"{:>2000000000}".format("")`; a width given as an argument: `{:{}}`
        return _widths_fit(owner) and not ("{:{" in owner or ":{" in owner)
    if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        times = len(owner) + 1 if args[0] == "" else owner.count(args[0])
        return len(owner) + times * max(len(args[1]) - len(args[0]), 0) <= MAX_LENGTH
    return True


def _range_fits(args: list) -> bool:
    try:
        return all(isinstance(a, int) for a in args) and len(range(*args)) <= MAX_LENGTH
    except (TypeError, ValueError, OverflowError):
        return False


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}

_COMPARES = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}

_BUILTINS = {
    "len": len,
    "min": min,
    "max": max,
    "abs": abs,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "any": any,
    "all": all,
    "range": range,
    "sorted": sorted,
    "isinstance": isinstance,
    "list": list,
    "tuple": tuple,
    "set": set,
    "getattr": getattr,
    "hasattr": hasattr,
    "print": print,
    "True": True,
    "False": False,
    "None": None,
}
_STR_METHODS = frozenset({"lower", "upper", "startswith", "endswith", "strip", "split", "replace", "format"})
_SILENT = frozenset({"warning", "warn", "info", "debug", "error", "log", "warning_once", "exception"})
