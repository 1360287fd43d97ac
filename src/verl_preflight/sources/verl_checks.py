"""The checks verl runs on its config at start, read from the code of the launch's verl and evaluated.

Nothing is imported or executed: the functions are read with `ast` from the verl
tree (installed, fetched or vendored alike) and evaluated by `Checker`, an
interpreter of the small part of Python such checks are written in (assignments,
`if`, `for` over known lists, `assert`, `raise`, arithmetic, comparisons,
f-strings, calls of functions and methods defined in verl, `super()`,
`omega_conf_to_dataclass` with the dataclass's `__post_init__`), over the launch's
effective config (`rules.view.LaunchView`).

Soundness: a value the launch does not fix (an unknown, a call into code outside
verl or outside this subset, a name bound in a statement that is not followed) is
*unknown*. A test on an unknown takes neither branch (what either branch assigns
becomes unknown), an assert on it passes, arithmetic on it is unknown: an unknown
never turns into a failure. What fails is a `Failure`: an assert that is false, a
`raise` that is reached, or Python's own TypeError / ZeroDivisionError on known
values (`megatron_dp * None`), with verl's message where it is known and the config
keys it read.

A linter reports every mistake, not only the first, so evaluation goes on after a
failure: a `raise` ends the `if` block (or the function) it is in, an assert is
passed over, and the config keys that failure read are unknown from then on (their
mistake is reported once, not again by each later check that reads them).

Which checks run depends on the version (`entry_checks`): verl >= 0.6's
`verl/utils/config.py validate_config(config, use_reference_policy, use_critic)`
where the entry point calls it (its arguments from verl's own
`need_reference_policy` / `need_critic` where the version has them), and before
that `RayPPOTrainer._validate_config(self)` (trainer/ppo/ray_trainer.py), which the
trainer's constructor calls.
"""

from __future__ import annotations

import abc
import ast
import collections.abc
import operator
import os
import re
from dataclasses import dataclass, field

from ._pyast import parse_file

UNKNOWN = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()
MAX_STEPS = 20_000  # statements per launch: a counted budget, never the clock
MAX_DEPTH = 40  # nested calls
MISSING = "???"  # OmegaConf's mandatory value: reading it raises, verl's checks never compare it


@dataclass
class Failure:
    """A check that fails: where in verl, what it says, the config keys behind it."""

    path: str  # the verl file, relative to the package (utils/config.py)
    line: int
    kind: str  # AssertionError, ValueError, TypeError, ...
    message: str | None  # as verl would print it; None when not known
    source: str  # the failing statement's first line
    reads: list = field(default_factory=list)  # config keys read by it, then by the tests around it
    own: list = field(default_factory=list)  # the keys read by the failing statement itself
    role: tuple | None = None  # (role, keys) when the check runs because verl uses that role: the critic
    nulls: list = field(default_factory=list)  # keys among `reads` whose value is null
    allowed: tuple | None = None  # a test of one config value against constants: those constants

    @property
    def value_set(self) -> bool:
        """A value outside the set verl accepts (config-value's), not a relation of settings."""
        return self.allowed is not None


@dataclass
class Evaluation:
    """What verl's start-up checks make of one launch: the failures, in the order verl meets
    them, and the config sections built into dataclasses along the way (their values were
    checked by the dataclass's own `__post_init__`)."""

    failures: list = field(default_factory=list)
    built: set = field(default_factory=set)  # config paths: actor_rollout_ref.actor, critic
    checks: list = field(default_factory=list)  # "verl/utils/config.py validate_config", ...


class _Stop(Exception):
    """The evaluation cannot go on (the step budget)."""


class _Raised(Exception):
    """A `raise` was reached: unwinds to the enclosing `if` block or call."""


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class ConfigRef:
    """A node of the launch's config (`config.actor_rollout_ref.actor`)."""

    def __init__(self, view, path: str):
        self.view = view
        self.path = path

    def child(self, name: str, checker, default=UNKNOWN, strict: bool = True):
        """The value at `name` below this node: a ConfigRef for a mapping, a plain value, or
        UNKNOWN. `strict`: a missing key is UNKNOWN (attribute access raises in OmegaConf's
        struct mode, which verl's checks never rely on); else `default` (`.get`)."""
        path = f"{self.path}.{name}" if self.path else name
        if path in checker.written:
            return checker.written[path]
        if checker.poisoned_at(path):
            return UNKNOWN
        node = self.view.raw(path)
        setting = self.view.setting(path)
        if node is None and setting is None:
            present = self.view.raw(self.path) if self.path else self.view.tree
            if isinstance(present, dict) and name not in present:
                return UNKNOWN if strict else default
        if isinstance(node, dict) and setting is None:
            return ConfigRef(self.view, path)
        checker.read(path)
        for source in _interpolation_sources(node if setting is None else None):
            if checker.poisoned_at(source):
                return UNKNOWN
            checker.read(source)
        value = self.view.value(path)
        if value is None:
            return None
        return _plain(value)


_INTERPOLATION = re.compile(r"\$\{(?:oc\.select:)?([\w.]+)")


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


class DataObj:
    """An instance of a verl config dataclass (or the trainer), with its field values."""

    def __init__(self, cls: ast.ClassDef, module: str, fields: dict, path: str | None = None):
        self.cls = cls
        self.module = module
        self.fields = fields
        self.path = path  # the config section it was built from
        self.taint: dict = {}  # field -> the config keys its value comes from


@dataclass
class _Function:
    node: ast.FunctionDef
    module: str  # the verl module it is defined in
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


class _Frame:
    """One call being evaluated: whether a statement of it was not followed (then a call that
    ends without `return` gives UNKNOWN, not None)."""

    def __init__(self, guards: int = 0):
        self.skipped = False
        self.guards = guards  # the guards around the call: the callee's own start after them


class Checker:
    """Evaluates verl's check functions over one launch's config (module docstring)."""

    def __init__(self, registry, view):
        self.registry = registry
        self.view = view
        self.steps = 0
        self.depth = 0
        self.reads: list[str] = []
        self.guards: list[_Guard] = []  # the `if` tests around the statement, outermost first
        self.failures: list[Failure] = []
        self.poisoned: set[str] = set()
        self.written: dict = {}  # config paths the checked code assigns
        self.built: set[str] = set()
        self.frames: list[_Frame] = []
        self.only_methods = None  # (object, names): of its methods only these are followed
        self.statement = 0  # where the reads of the statement being evaluated start
        self.compared: dict = {}  # id(Compare) -> the constants one value was compared with

    # ---- entry -------------------------------------------------------------------

    def run(self, module: str, fn: ast.FunctionDef, args: list, bound=None, owner=None, taints=None) -> None:
        """Evaluate `fn(*args)`; the failures met are in `self.failures`."""
        try:
            self.call(_Function(fn, module, bound=bound, owner=owner), args, {}, taints)
        except (_Stop, _Return, _Raised, RecursionError):
            pass

    def read(self, path: str) -> None:
        self.reads.append(path)

    def poisoned_at(self, path: str) -> bool:
        return path in self.poisoned

    # ---- statements --------------------------------------------------------------

    def call(self, fn: _Function, args: list, kwargs: dict, taints: list | None = None, kwtaints: dict | None = None):
        if self.depth >= MAX_DEPTH:
            return UNKNOWN
        if self.only_methods is not None and fn.bound is self.only_methods[0] and self.depth > 0:
            if fn.node.name not in self.only_methods[1]:
                if self.frames:
                    self.frames[-1].skipped = True
                return UNKNOWN
        node = fn.node
        scope = dict(fn.closure)
        taint = scope[_TAINT] = dict(fn.closure.get(_TAINT, {}))
        taints = list(taints or [])
        kwtaints = kwtaints or {}
        if fn.owner is not None:
            scope["__class__"] = fn.owner
        positional = [*node.args.posonlyargs, *node.args.args]
        params = [a.arg for a in positional]
        if fn.bound is not None:
            args = [fn.bound, *args]
            taints = [(), *taints]
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
        if node.args.vararg is not None:
            scope[node.args.vararg.arg] = UNKNOWN
        if node.args.kwarg is not None:
            scope[node.args.kwarg.arg] = UNKNOWN
        frame = _Frame(len(self.guards))
        self.frames.append(frame)
        self.depth += 1
        try:
            self.block(node.body, scope, fn.module)
        except _Return as ret:
            return ret.value
        except _Raised:
            return UNKNOWN  # the failure is recorded; the caller goes on
        finally:
            self.depth -= 1
            self.frames.pop()
        return UNKNOWN if frame.skipped else None

    def block(self, body: list, scope: dict, module: str) -> None:
        for stmt in body:
            self.stmt(stmt, scope, module)

    def stmt(self, node: ast.stmt, scope: dict, module: str) -> None:  # noqa: C901 (one dispatch)
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Stop
        self.statement = len(self.reads)
        if isinstance(node, ast.Expr):
            self.expr(node.value, scope, module)
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value, scope, module)
            for target in node.targets:
                self.assign(target, value, scope, module, self.reads[self.statement :])
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                value = self.expr(node.value, scope, module)
                self.assign(node.target, value, scope, module, self.reads[self.statement :])
        elif isinstance(node, ast.AugAssign):
            current = self.expr(_as_load(node.target), scope, module)
            value = self.binop(node, node.op, current, self.expr(node.value, scope, module), module)
            self.assign(node.target, value, scope, module, self.reads[self.statement :])
        elif isinstance(node, ast.If):
            self.if_stmt(node, scope, module)
        elif isinstance(node, ast.Assert):
            start = len(self.reads)
            test = _truth(self.expr(node.test, scope, module))
            if test is False:
                message = self.expr(node.msg, scope, module) if node.msg is not None else None
                self.fail(node, module, "AssertionError", message, start, node.test)
        elif isinstance(node, ast.Raise):
            start = len(self.reads)
            kind, message = self.exception(node.exc, scope, module)
            self.fail(node, module, kind, message, start, None)
            raise _Raised
        elif isinstance(node, ast.Return):
            raise _Return(self.expr(node.value, scope, module) if node.value is not None else None)
        elif isinstance(node, ast.FunctionDef):
            scope[node.name] = _Function(node, module, closure=scope)
        elif isinstance(node, ast.For):
            items = self.expr(node.iter, scope, module)
            if isinstance(items, dict):
                items = list(items)
            if not isinstance(items, list | tuple | range | str) or node.orelse:
                self.havoc([node], scope, module)
                return
            for item in list(items)[:1000]:
                self.assign(node.target, item, scope, module)
                self.block(node.body, scope, module)
        elif isinstance(node, ast.ImportFrom):
            self.import_from(node, scope, module)
        elif isinstance(node, ast.Pass | ast.Import | ast.Global | ast.Nonlocal):
            return
        elif isinstance(node, ast.Try) and not node.handlers:
            self.block(node.body, scope, module)
            self.block(node.finalbody, scope, module)
        else:  # try with handlers, with, while, match, ...: not followed
            self.havoc([node], scope, module)

    def if_stmt(self, node: ast.If, scope: dict, module: str) -> None:
        start = len(self.reads)
        test = _truth(self.expr(node.test, scope, module))
        guard = self.reads[start:]
        if test is UNKNOWN:
            self.havoc(node.body + node.orelse, scope, module)
            return  # neither branch: an unknown never turns into a failure
        self.guards.append(_Guard(guard, node.test, bool(test)))
        try:
            self.block(node.body if test else node.orelse, scope, module)
        except _Raised:
            pass  # the failure is recorded; the checks after this `if` still run
        finally:
            self.guards.pop()

    def havoc(self, stmts: list, scope: dict, module: str) -> None:
        """Statements not followed: every name and field they may assign becomes unknown."""
        if self.frames:
            self.frames[-1].skipped = True
        for stmt in stmts:
            for node in ast.walk(stmt):
                targets = []
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.NamedExpr):
                    targets = [node.target]
                elif isinstance(node, ast.With):
                    targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
                elif isinstance(node, ast.ExceptHandler) and node.name:
                    scope[node.name] = UNKNOWN
                for target in targets:
                    self.forget(target, scope, module)

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

    def import_from(self, node: ast.ImportFrom, scope: dict, module: str) -> None:
        """`from verl.x import f` inside a function: the name is verl's `f`."""
        if node.level:
            base = module.split(".")[: -node.level]
            target = ".".join([*base, node.module] if node.module else base)
        else:
            target = node.module or ""
        for alias in node.names:
            found = self.registry._lookup(target, alias.name, set()) if target.startswith("verl") else None
            scope[alias.asname or alias.name] = self.definition(found)

    def fail(self, node, module: str, kind: str, message, start: int, test) -> None:
        """Record a failure. Its own keys: what the failing statement read and, for a `raise`,
        the tests of the `if` / `elif` chain that led to it; the outer tests' keys are its
        context. `test`: the failing assert's test."""
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
        failure = Failure(path, node.lineno, kind, shown, source, reads=reads, own=own, nulls=nulls)
        if len(own) == 1:
            tests = [g.test for g in chain] if chain else [test]
            failure.allowed = self.value_set(tests)
        self.failures.append(failure)
        self.poisoned.update(own)  # the keys of the failing test: their mistake is reported once

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
        if isinstance(exc, ast.Call):
            name = exc.func.id if isinstance(exc.func, ast.Name) else getattr(exc.func, "attr", "Exception")
            message = self.expr(exc.args[0], scope, module) if exc.args else None
            return name, message
        if isinstance(exc, ast.Name):
            return exc.id, None
        return "Exception", None

    def assign(self, target, value, scope: dict, module: str, taint=()) -> None:
        """Bind `target` to `value`; `taint`: the config keys the value was computed from (and the
        tests of the `if`s it is assigned under: `if adv == "gae": use_critic = True`)."""
        base = self.frames[-1].guards if self.frames else 0
        under = [k for g in self.guards[base:] for k in g.reads]
        taint = tuple(dict.fromkeys([*under, *taint])) if _plain_value(value) or value is None else ()
        if isinstance(target, ast.Name):
            scope[target.id] = value
            scope.setdefault(_TAINT, {})[target.id] = taint
        elif isinstance(target, ast.Tuple | ast.List):
            items = list(value) if isinstance(value, list | tuple) else None
            if items is not None and len(items) == len(target.elts):
                for t, v in zip(target.elts, items, strict=True):
                    self.assign(t, v, scope, module, taint)
            else:
                for t in target.elts:
                    self.assign(t, UNKNOWN, scope, module)
        elif isinstance(target, ast.Attribute):
            owner = self.expr(target.value, scope, module)
            if isinstance(owner, DataObj):
                owner.fields[target.attr] = value
                owner.taint[target.attr] = taint
            elif isinstance(owner, ConfigRef):
                self.write(owner, target.attr, value)
        elif isinstance(target, ast.Subscript):
            owner = self.expr(target.value, scope, module)
            key = self.expr(target.slice, scope, module)
            if isinstance(owner, ConfigRef):
                if isinstance(key, str):
                    self.write(owner, key, value)
                else:
                    self.poisoned.add(owner.path)
            elif isinstance(owner, dict | list) and key is not UNKNOWN:
                try:
                    owner[key] = value
                except (TypeError, IndexError):
                    pass

    def write(self, owner: ConfigRef, name: str, value) -> None:
        """The checked code sets a config key (`config.x.y = v`, under `open_dict`): later reads
        see it; a node replaced by an unknown makes what is below it unknown too."""
        path = f"{owner.path}.{name}" if owner.path else name
        self.written[path] = value
        for key in list(self.written):
            if key.startswith(path + "."):
                del self.written[key]
        if value is UNKNOWN:
            self.poisoned.add(path)

    # ---- expressions -------------------------------------------------------------

    def expr(self, node, scope: dict, module: str):  # noqa: C901 (one dispatch over node types)
        if node is None:
            return None
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.name(node.id, scope, module)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.expr(node.value, scope, module), node.attr)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, scope, module)
        if isinstance(node, ast.BinOp):
            left = self.expr(node.left, scope, module)
            return self.binop(node, node.op, left, self.expr(node.right, scope, module), module)
        if isinstance(node, ast.UnaryOp):
            value = self.expr(node.operand, scope, module)
            if isinstance(node.op, ast.Not):
                truth = _truth(value)
                return UNKNOWN if truth is UNKNOWN else not truth
            if not isinstance(value, int | float) or isinstance(node.op, ast.Invert):
                return UNKNOWN
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BoolOp):
            return self.boolop(node, scope, module)
        if isinstance(node, ast.Compare):
            return self.compare(node, scope, module)
        if isinstance(node, ast.IfExp):
            test = _truth(self.expr(node.test, scope, module))
            if test is UNKNOWN:
                return UNKNOWN
            return self.expr(node.body if test else node.orelse, scope, module)
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node, scope, module)
        if isinstance(node, ast.FormattedValue):
            return self.expr(node.value, scope, module)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items = [self.expr(e, scope, module) for e in node.elts]
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return UNKNOWN
            if isinstance(node, ast.Set):
                return set(items) if all(_hashable(i) for i in items) else UNKNOWN
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            keys = [self.expr(k, scope, module) for k in node.keys]
            if any(k is UNKNOWN or k is None or not _hashable(k) for k in keys):
                return UNKNOWN
            return dict(zip(keys, (self.expr(v, scope, module) for v in node.values), strict=True))
        if isinstance(node, ast.Call):
            return self.call_expr(node, scope, module)
        return UNKNOWN

    def subscript(self, node: ast.Subscript, scope: dict, module: str):
        owner = self.expr(node.value, scope, module)
        key = self.expr(node.slice, scope, module)
        if isinstance(owner, ConfigRef) and isinstance(key, str):
            return owner.child(key, self)
        if isinstance(owner, DataObj) and isinstance(key, str):
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
        try:
            return _BINOPS[type(op)](left, right)
        except (TypeError, ZeroDivisionError) as err:  # Python's own error on known values: verl's too
            self.python_error(node, module, err)
            return UNKNOWN
        except (ValueError, OverflowError):
            return UNKNOWN

    def python_error(self, node, module: str, err: Exception) -> None:
        self.fail(node, module, type(err).__name__, str(err), self.statement, None)

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
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            if left is None or right is None or not _plain_value(left) or not _plain_value(right):
                same = left is right
            elif isinstance(left, bool) and isinstance(right, bool):
                same = left is right
            else:
                return UNKNOWN  # the identity of equal numbers or strings is Python's detail
            return same if isinstance(op, ast.Is) else not same
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        if isinstance(op, ast.In | ast.NotIn):
            if not isinstance(right, list | tuple | set | frozenset | dict | str | range):
                return UNKNOWN
            if not _plain_value(left) and left is not None:
                return UNKNOWN
            try:
                found = left in right
            except TypeError:
                return UNKNOWN
            return found if isinstance(op, ast.In) else not found
        if not (_plain_value(left) or left is None) or not (_plain_value(right) or right is None):
            return UNKNOWN
        try:
            return _COMPARES[type(op)](left, right)
        except TypeError as err:  # `None < 3`: Python's error on known values, verl's too
            if isinstance(op, ast.Eq | ast.NotEq):
                return UNKNOWN
            self.python_error(node, module, err)
            return UNKNOWN

    def boolop(self, node: ast.BoolOp, scope: dict, module: str):
        is_and = isinstance(node.op, ast.And)
        result = True if is_and else False
        for value_node in node.values:
            value = self.expr(value_node, scope, module)
            truth = _truth(value)
            if truth is UNKNOWN:
                # `a and b` with `a` unknown: unknown, unless a later operand decides it
                rest = [_truth(self.expr(v, scope, module)) for v in node.values[node.values.index(value_node) + 1 :]]
                if is_and and False in rest:
                    return False
                if not is_and and True in rest:
                    return True
                return UNKNOWN
            if is_and and not truth:
                return value
            if not is_and and truth:
                return value
            result = value
        return result

    def fstring(self, node: ast.JoinedStr, scope: dict, module: str):
        out = []
        for part in node.values:
            value = self.expr(part, scope, module)
            if value is UNKNOWN or not (_plain_value(value) or value is None):
                return UNKNOWN
            if isinstance(part, ast.FormattedValue) and part.format_spec is not None:
                spec = self.expr(part.format_spec, scope, module)
                try:
                    value = format(value, spec) if isinstance(spec, str) else value
                except (TypeError, ValueError):
                    return UNKNOWN
            out.append(value if isinstance(part, ast.Constant) else _shown(value))
        return "".join(out)

    def name(self, name: str, scope: dict, module: str):
        if name in scope:
            taint = scope.get(_TAINT, {}).get(name, ())
            if any(self.poisoned_at(k) for k in taint):
                return UNKNOWN  # computed from a key whose mistake is already reported
            self.reads.extend(taint)
            return scope[name]
        if name in _BUILTINS:
            return _BUILTINS[name]
        return self.definition(self.registry._lookup(module, name, set()))

    def definition(self, found):
        """A name's value from its definition in verl: a function, a class, a constant."""
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

    def attribute(self, owner, attr: str):
        if owner is UNKNOWN:
            return UNKNOWN
        if isinstance(owner, ConfigRef):
            if attr in ("get", "keys", "values", "items"):
                return _Method(owner, attr)
            return owner.child(attr, self)
        if isinstance(owner, DataObj):
            if attr in owner.fields:
                return self.field(owner, attr)
            if attr == "get" and owner.path is not None:
                return _Method(owner, "get")
            method = self.method(owner.cls, owner.module, attr)
            if method is not None:
                fn, where, cls = method
                if _is_static(fn):
                    return _Function(fn, where, owner=(cls, where))
                return _Function(fn, where, bound=owner, owner=(cls, where))
            return UNKNOWN
        if isinstance(owner, _Class):
            for stmt in owner.node.body:  # an enum member or a class constant
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
                    return self.expr(stmt.value, {}, owner.module)
                if isinstance(stmt, ast.FunctionDef) and stmt.name == attr and _is_static(stmt):
                    return _Function(stmt, owner.module, owner=(owner.node, owner.module))
            return UNKNOWN
        if isinstance(owner, dict) and attr in ("get", "keys", "values", "items"):
            return _Method(owner, attr)
        if isinstance(owner, str) and attr in _STR_METHODS:
            return _Method(owner, attr)
        return UNKNOWN

    def field(self, owner: DataObj, attr: str):
        """A field of a built section, with the config keys its value comes from."""
        taint = owner.taint.get(attr, ())
        if any(self.poisoned_at(k) for k in taint):
            return UNKNOWN
        self.reads.extend(taint)
        return owner.fields[attr]

    def method(self, cls: ast.ClassDef, module: str, name: str):
        """(FunctionDef, module, defining class) of `name` in the class or its bases (in verl)."""
        for klass, where in self._mro(cls, module):
            for stmt in klass.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                    return stmt, where, klass
        return None

    def class_binds(self, cls: ast.ClassDef, module: str, name: str) -> bool:
        """Whether the class or a base (in verl, or any base outside it) defines `name`."""
        for klass, where in self._mro(cls, module):
            for stmt in klass.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                    return True
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return True
            for base in klass.bases:
                ref = ast.unparse(base)
                found = self.registry._resolve_dotted(where, ref)
                if found is not None and isinstance(found[2], ast.ClassDef):
                    continue
                known = _OUTSIDE_BASES.get(ref)
                if known is None or hasattr(known, name):
                    return True  # a base from outside verl that may define it
        return False

    def call_expr(self, node: ast.Call, scope: dict, module: str):
        func_node = node.func
        if isinstance(func_node, ast.Attribute) and func_node.attr in _SILENT:
            return None  # logger.warning, warnings.warn, print-like: nothing to check
        if _is_super_call(func_node):
            return self.super_call(node, scope, module)
        func = self.expr(func_node, scope, module)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return UNKNOWN
        args, taints = [], []
        for a in node.args:
            start = len(self.reads)
            args.append(self.expr(a, scope, module))
            taints.append(tuple(self.reads[start:]))
        kwargs, kwtaints = {}, {}
        for k in node.keywords:
            start = len(self.reads)
            kwargs[k.arg] = self.expr(k.value, scope, module)
            kwtaints[k.arg] = tuple(self.reads[start:])
        if isinstance(func, _Function):
            if func.node.name == "omega_conf_to_dataclass":
                target = kwargs.get("dataclass_type", args[1] if len(args) > 1 else None)
                return self.build(args[0] if args else UNKNOWN, target)
            return self.call(func, args, kwargs, taints, kwtaints)
        if isinstance(func, _Method):
            return func.call(args, self)
        if func in _GETATTR:
            return self.getattr_call(func, args)
        if func is print:
            return None
        if callable(func) and any(func is b for b in _BUILTINS.values()):
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
        if isinstance(owner, DataObj):
            if name in owner.fields:
                return True if func is hasattr else owner.fields[name]
            if owner.path is None or self.class_binds(owner.cls, owner.module, name):
                return UNKNOWN  # the trainer, or a method / class attribute: not followed
            if func is hasattr:
                return False  # a built dataclass has its fields and what its classes define
            return args[2] if len(args) > 2 else UNKNOWN
        if isinstance(owner, ConfigRef):
            value = owner.child(name, self, default=_ABSENT, strict=False)
            if func is hasattr:
                return UNKNOWN if value is UNKNOWN else value is not _ABSENT
            if value is _ABSENT:
                return args[2] if len(args) > 2 else UNKNOWN
            return value
        if owner is None and func is getattr and len(args) > 2:
            return args[2]
        return UNKNOWN

    def super_call(self, node: ast.Call, scope: dict, module: str):
        """`super().method(args)` in a method: the next definition after the defining class."""
        this, owner = scope.get("self"), scope.get("__class__")
        if not isinstance(this, DataObj) or not isinstance(owner, tuple):
            return UNKNOWN
        cls, where = owner
        args = [self.expr(a, scope, module) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, scope, module) for k in node.keywords if k.arg}
        for base, base_module in self._bases(cls, where):
            hit = self.method(base, base_module, node.func.attr)
            if hit is not None:
                fn, fn_module, fn_cls = hit
                return self.call(_Function(fn, fn_module, bound=this, owner=(fn_cls, fn_module)), args, kwargs)
        return None if node.func.attr == "__post_init__" else UNKNOWN

    def build(self, node, dataclass_type):
        """omega_conf_to_dataclass(node): the dataclass its `_target_` (or `dataclass_type`)
        names, fields from the node (converted to the field's type as OmegaConf does), the rest
        from the class's defaults; its __post_init__ runs."""
        if not isinstance(node, ConfigRef):
            return UNKNOWN
        if isinstance(dataclass_type, _Class):
            cls, where = dataclass_type.node, dataclass_type.module
        elif dataclass_type is not None:
            return UNKNOWN
        else:
            target = self.view.raw(f"{node.path}._target_")
            setting = self.view.setting(f"{node.path}._target_")
            if setting is not None:
                target = setting.value if setting.known else None
            if not isinstance(target, str) or not target.startswith("verl."):
                return UNKNOWN
            module, _, name = target.rpartition(".")
            found = self.registry._lookup(module, name, set())
            if found is None or not isinstance(found[2], ast.ClassDef):
                return UNKNOWN
            cls, where = found[2], found[0]
        qualname = f"{where}.{cls.name}"
        types = self.registry.field_types(qualname) or {}
        values, taint = {}, {}
        for field_name, annotation in types.items():
            start = len(self.reads)
            present = node.child(field_name, self, default=_ABSENT, strict=False)
            taint[field_name] = tuple(self.reads[start:]) or (f"{node.path}.{field_name}",)
            if present is _ABSENT:
                values[field_name] = self.default(cls, where, field_name)
            else:
                values[field_name] = _as_field_type(present, annotation)
        del self.reads[self.statement :]  # building reads every field; a check reads what it uses
        obj = DataObj(cls, where, values, node.path)
        obj.taint = taint
        self.built.add(node.path)
        post = self.method(cls, where, "__post_init__")
        if post is not None:
            fn, fn_module, fn_cls = post
            self.call(_Function(fn, fn_module, bound=obj, owner=(fn_cls, fn_module)), [], {})
        return obj

    def default(self, cls: ast.ClassDef, module: str, name: str):
        for klass, _where in self._mro(cls, module):
            for stmt in klass.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
                    if isinstance(stmt.value, ast.Constant):
                        return stmt.value.value
                    return UNKNOWN
        return UNKNOWN

    def _bases(self, cls: ast.ClassDef, module: str):
        """The classes after `cls` in its method resolution order (depth first, in verl)."""
        mro = list(self._mro(cls, module))
        return mro[1:]

    def _mro(self, cls: ast.ClassDef, module: str, seen: set | None = None):
        seen = set() if seen is None else seen
        if (module, cls.name) in seen:
            return
        seen.add((module, cls.name))
        yield cls, module
        for base in cls.bases:
            found = self.registry._resolve_dotted(module, ast.unparse(base))
            if found is not None and isinstance(found[2], ast.ClassDef):
                yield from self._mro(found[2], found[0], seen)


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


class _Method:
    """A method of a plain value, a config node or a built section: get, keys, lower, ..."""

    def __init__(self, owner, name: str):
        self.owner = owner
        self.name = name

    def call(self, args: list, checker: Checker):
        owner = self.owner
        if isinstance(owner, ConfigRef):
            if self.name != "get" or not args or not isinstance(args[0], str):
                return UNKNOWN
            value = owner.child(args[0], checker, default=args[1] if len(args) > 1 else None, strict=False)
            return value
        if isinstance(owner, DataObj):
            if not args or not isinstance(args[0], str):
                return UNKNOWN
            return owner.fields.get(args[0], args[1] if len(args) > 1 else None)
        if any(a is UNKNOWN or not (_plain_value(a) or a is None) for a in args):
            return UNKNOWN
        if isinstance(owner, dict) and any(v is UNKNOWN for v in owner.values()) and self.name != "get":
            return UNKNOWN
        try:
            result = getattr(owner, self.name)(*args)
        except Exception:  # noqa: BLE001 (a method of a plain value refused its arguments)
            return UNKNOWN
        return list(result) if self.name in ("keys", "values", "items") else result


def _is_super_call(func) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )


def _is_static(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def _as_load(target):
    return target


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


def _shown(value) -> str:
    return str(value)


def _truth(value):
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, ConfigRef | DataObj | _Function | _Method | _Class):
        return True
    try:
        return bool(value)
    except Exception:  # noqa: BLE001
        return UNKNOWN


def _is_null(view, key: str) -> bool:
    s = view.setting(key)
    if s is not None:
        return s.known and s.value is None
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


# ---- which checks a version runs ---------------------------------------------------------


@dataclass
class EntryCheck:
    """One check function a launch of this entry point runs, and how it is called."""

    module: str  # verl.utils.config
    node: ast.FunctionDef
    style: str  # "validate_config" (config, use_reference_policy, use_critic) or "trainer" (self)
    owner: ast.ClassDef | None = None

    @property
    def name(self) -> str:
        path = "/".join(["verl", *self.module.split(".")[1:]]) + ".py"
        if self.owner is not None:
            return f"{path} {self.owner.name}._validate_config"
        return f"{path} {self.node.name}"


def entry_checks(verl_root: str, entry_module_file: str | None) -> list[EntryCheck]:
    """The config checks the entry point's driver runs at this version (module docstring)."""
    out = []
    text = _read(entry_module_file) if entry_module_file else ""
    if "validate_config(" in text:
        tree = parse_file(os.path.join(verl_root, "utils", "config.py"))
        fn = _function(tree, "validate_config")
        if fn is not None:
            out.append(EntryCheck("verl.utils.config", fn, "validate_config"))
    elif "RayPPOTrainer(" in text:
        tree = parse_file(os.path.join(verl_root, "trainer", "ppo", "ray_trainer.py"))
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RayPPOTrainer"), None) if tree else None
        init = _function(cls, "__init__") if cls else None
        fn = _function(cls, "_validate_config") if cls else None
        if fn is not None and init is not None and "_validate_config" in ast.unparse(init):
            # the constructor, for what it decides before it calls the check (use_critic)
            out.append(EntryCheck("verl.trainer.ppo.ray_trainer", init, "trainer", cls))
    return out


def _function(tree, name: str):
    if tree is None:
        return None
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def evaluate(registry, view, checks: list[EntryCheck]) -> Evaluation:
    """Each check over the launch's config: every failure met, and the sections built."""
    out = Evaluation(checks=[c.name for c in checks])
    for check in checks:
        checker = Checker(registry, view)
        config = ConfigRef(view, "")
        (ref_policy, ref_keys), (critic, critic_keys) = _roles(registry, view)
        roles = (("reference policy", ref_keys), ("critic", critic_keys))
        if check.style == "validate_config":
            checker.run(check.module, check.node, [config, ref_policy, critic], taints=[(), ref_keys, critic_keys])
        else:  # RayPPOTrainer(config, ...): its constructor up to the methods it calls, but the check
            trainer = DataObj(check.owner, check.module, {})
            checker.only_methods = (trainer, {"_validate_config"})
            checker.run(check.module, check.node, [config], bound=trainer, owner=(check.owner, check.module))
        if check.style == "trainer":  # the constructor decides use_critic from the estimator
            roles = (("critic", ("algorithm.adv_estimator",)),)
        for failure in checker.failures:
            context = [k for k in failure.reads if k not in failure.own]
            failure.role = next(((r, keys) for r, keys in roles if keys and set(keys) & set(context)), None)
        out.failures.extend(checker.failures)
        out.built |= checker.built
    return out


def _roles(registry, view):
    """((use_reference_policy, keys it read), (use_critic, keys)) as the launch's verl decides
    them, where it has `need_reference_policy` / `need_critic` (trainer/ppo/utils.py); unknown
    otherwise."""
    out = []
    for name in ("need_reference_policy", "need_critic"):
        found = registry._lookup("verl.trainer.ppo.utils", name, set())
        if found is None or not isinstance(found[2], ast.FunctionDef):
            out.append((UNKNOWN, ()))
            continue
        checker = Checker(registry, view)
        try:
            value = checker.call(_Function(found[2], found[0]), [ConfigRef(view, "")], {})
        except (_Stop, _Raised, _Return, RecursionError):
            value = UNKNOWN
        known = isinstance(value, bool) and not checker.failures
        out.append((value if known else UNKNOWN, tuple(dict.fromkeys(checker.reads))))
    return tuple(out)


def launch_evaluation(view) -> Evaluation | None:
    """verl's start-up checks over one launch, evaluated once per launch and shared by the rules
    that read them (verl-check, and config-value for the sections it leaves to them); None when
    the launch's verl sources are not here or its entry point runs no such check."""
    cached = getattr(view, "_verl_evaluation", _ABSENT)
    if cached is not _ABSENT:
        return cached
    from ..hydra_stage.tree import _module_files, in_verl
    from .verl_classes import verl_sources

    source = view.source
    registry = verl_sources(source.package_root if source is not None else None)
    module = in_verl(view.spec.module)
    result = None
    if registry is not None and module is not None:
        files = [f for f in _module_files(registry.root, module) if f.endswith(".py") and os.path.isfile(f)]
        checks = entry_checks(registry.root, files[0] if files else None)
        if checks:
            result = evaluate(registry, view, checks)
    view._verl_evaluation = result
    return result
