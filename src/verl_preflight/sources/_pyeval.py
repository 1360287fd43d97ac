"""Evaluate a few statements of verl's own code over a launch's config, without importing verl.

verl's workers normalize batch sizes and check them in their constructors, in a
small part of Python: assignments (`self.config.actor.ppo_mini_batch_size *=
self.config.rollout.n`), `if`, `assert`, `raise`, arithmetic, comparisons,
`.get(key, default)` on the config and a few calls whose value the launch
decides (`torch.distributed.get_world_size()`, `mpu.get_data_parallel_world_size()`).
`Evaluator` runs such a function body read with `ast`:

- `self.config` is the launch's config at a prefix (`actor_rollout_ref`,
  `critic`); writes to it go to an overlay, never to the launch.
- A call is evaluated only when its dotted name is one of `calls` (given by the
  caller, e.g. the world size); any other call, an import, a subscript of the
  environment is *unknown*.
- An unknown value makes every expression that uses it unknown; an `if` on an
  unknown test takes neither branch and makes what either branch assigns unknown;
  an `assert` on an unknown passes. An unknown never turns into a failure.
- What fails is a `Failure`: an assert that is false, a `raise` reached, a
  ZeroDivisionError or a TypeError (None in arithmetic) on known values; its
  message is verl's own, with the f-string filled in where its values are known.

Every value carries the config keys it was computed from, so a failure can be
reported at the override that wrote one of them.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field

UNKNOWN = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN", "__bool__": None})()
MAX_STEPS = 5000


@dataclass
class Failure:
    line: int
    kind: str  # AssertionError, ValueError, ZeroDivisionError, TypeError
    message: str  # verl's message (or the failing statement) with known values filled in
    keys: list[str] = field(default_factory=list)  # config keys behind it, in reading order


@dataclass
class Assigned:
    """A config value the code rewrote (normalization): where, and what it became."""

    key: str
    value: object
    line: int
    keys: list[str]


class _Stop(Exception):
    pass


class _Raised(Exception):
    def __init__(self, failure: Failure):
        self.failure = failure


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class Node:
    """A section of the launch's config (`self.config.actor`)."""

    def __init__(self, ev: Evaluator, path: str):
        self.ev = ev
        self.path = path


class Obj:
    """An object of the code (`self`, a model's hf_config): its attributes; `pinned` ones keep
    the value the caller gave when the code assigns them an unknown (the result of a call we do
    not follow, such as `omega_conf_to_dataclass(config)`); `methods` are the class's functions,
    followed when the code calls `self.name()`."""

    def __init__(self, attrs: dict | None = None, pinned: frozenset = frozenset(), methods: dict | None = None):
        self.attrs = dict(attrs or {})
        self.pinned = pinned
        self.methods = methods or {}


@dataclass
class V:
    """A value and the config keys it comes from."""

    value: object
    keys: tuple = ()


_BIN = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
}
_CMP = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}


def _merge(*vals: V) -> tuple:
    out: list = []
    for v in vals:
        for k in v.keys:
            if k not in out:
                out.append(k)
    return tuple(out)


class Evaluator:
    """Run one function body over a launch's config (see the module doc)."""

    def __init__(self, view, calls: dict | None = None, functions: dict | None = None):
        self.view = view
        self.calls = calls or {}  # dotted call name -> value or callable(evaluator, call node)
        self.functions = functions or {}  # name -> ast.FunctionDef of verl's own, followed when called
        self.overlay: dict[str, V] = {}
        self.assigned: list[Assigned] = []
        self.failures: list[Failure] = []
        self.steps = 0
        self.depth = 0
        self.locals: dict[str, V] = {}
        self.tests: list = []  # the keys of the `if` tests around the statement being run
        self.capture: set = set()  # Call or Dict nodes whose arguments to record when evaluated
        self.captured: dict = {}  # node -> {keyword: V}

    # ---- config ---------------------------------------------------------------

    def _present(self, path: str) -> bool:
        if path in self.overlay:
            return True
        parent, _, name = path.rpartition(".")
        node = self.view.raw(parent) if parent else self.view.tree
        return (isinstance(node, dict) and name in node) or self.view.setting(path) is not None

    def config(self, path: str, default: V | None = None) -> V:
        if path in self.overlay:
            return self.overlay[path]
        if not self._present(path):
            return default if default is not None else V(UNKNOWN)
        node = self.view.raw(path)
        if isinstance(node, dict) and self.view.setting(path) is None:
            return V(Node(self, path))
        value = self.view.value(path)
        if value is not None and _unknown_value(value):
            return V(UNKNOWN, (path,))
        return V(value, (path,))

    # ---- statements -------------------------------------------------------------

    def run(self, body: list[ast.stmt], params: dict[str, V]) -> None:
        self.locals = dict(params)
        try:
            self._block(body)
        except (_Stop, _Return):
            pass
        except _Raised as raised:
            self.failures.append(raised.failure)

    def _block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise _Stop
            self._stmt(stmt)

    def _stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            value = self._eval(stmt.value)
            for target in stmt.targets:
                self._store(target, value, stmt.lineno)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._store(stmt.target, self._eval(stmt.value), stmt.lineno)
        elif isinstance(stmt, ast.AugAssign):
            current = self._eval(stmt.target)
            value = self._binop(type(stmt.op), current, self._eval(stmt.value), stmt)
            self._store(stmt.target, value, stmt.lineno)
        elif isinstance(stmt, ast.If):
            value = self._eval(stmt.test)
            test = self._truth(value)
            if test is UNKNOWN:
                self._havoc(stmt.body + stmt.orelse)
            else:
                self.tests.append(value.keys)
                try:
                    self._block(stmt.body if test else stmt.orelse)
                finally:
                    self.tests.pop()
        elif isinstance(stmt, ast.Assert):
            test = self._eval(stmt.test)
            truth = self._truth(test)
            if truth is False:
                msg = self._message(stmt.msg) if stmt.msg is not None else None
                text = msg or f"assert {ast.unparse(stmt.test)}"
                raise _Raised(Failure(stmt.lineno, "AssertionError", text, list(test.keys)))
        elif isinstance(stmt, ast.Raise):
            kind = "Exception"
            msg = None
            exc = stmt.exc
            if isinstance(exc, ast.Call):
                kind = (ast.unparse(exc.func).rsplit(".", 1)[-1]) or kind
                msg = self._message(exc.args[0]) if exc.args else None
            keys = [k for ks in self.tests for k in ks]
            raise _Raised(Failure(stmt.lineno, kind, msg or ast.unparse(stmt), list(dict.fromkeys(keys))))
        elif isinstance(stmt, ast.With):
            self._block(stmt.body)
        elif isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Call):
                self._call(stmt.value)  # a call for its effect: only the ones we were given matter
        elif isinstance(stmt, ast.Return):
            raise _Return(self._eval(stmt.value) if stmt.value is not None else V(None))
        elif isinstance(stmt, ast.For | ast.While | ast.Try | ast.AsyncFor | ast.AsyncWith | ast.Match):
            self._havoc([stmt])
        # imports, nested defs, pass, global ...: nothing we follow

    def _havoc(self, body: list[ast.stmt]) -> None:
        """What a block we do not run may assign becomes unknown."""
        for node in body:
            for sub in ast.walk(node):
                targets = []
                if isinstance(sub, ast.Assign):
                    targets = sub.targets
                elif isinstance(sub, ast.AugAssign | ast.AnnAssign):
                    targets = [sub.target]
                for t in targets:
                    self._store(t, V(UNKNOWN), None, record=False)

    def _store(self, target: ast.expr, value: V, line: int | None, record: bool = True) -> None:
        if isinstance(target, ast.Name):
            self.locals[target.id] = value
            return
        if isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self._store(elt, V(UNKNOWN), line, record=False)
            return
        if isinstance(target, ast.Attribute):
            base = self._eval(target.value).value
            if isinstance(base, Node):
                path = _join(base.path, target.attr)
                keys = value.keys if path in value.keys else (*value.keys, path)
                self.overlay[path] = V(value.value, keys)
                if record and line is not None:
                    self.assigned.append(Assigned(path, value.value, line, list(keys)))
            elif isinstance(base, Obj) and not (target.attr in base.pinned and value.value is UNKNOWN):
                base.attrs[target.attr] = value

    # ---- expressions ------------------------------------------------------------

    def _eval(self, node: ast.expr) -> V:
        if isinstance(node, ast.Constant):
            return V(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return self.locals[node.id]
            if node.id in ("True", "False", "None"):
                return V({"True": True, "False": False, "None": None}[node.id])
            return V(UNKNOWN)
        if isinstance(node, ast.Attribute):
            base = self._eval(node.value)
            if isinstance(base.value, Node):
                return self.config(_join(base.value.path, node.attr))
            if isinstance(base.value, Obj):
                return base.value.attrs.get(node.attr, V(UNKNOWN))
            return V(UNKNOWN)
        if isinstance(node, ast.BinOp):
            return self._binop(type(node.op), self._eval(node.left), self._eval(node.right), node)
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand)
            if v.value is UNKNOWN:
                return v
            if isinstance(node.op, ast.Not):
                t = self._truth(v)
                return V(UNKNOWN if t is UNKNOWN else not t, v.keys)
            if isinstance(node.op, ast.USub) and isinstance(v.value, int | float):
                return V(-v.value, v.keys)
            return V(UNKNOWN, v.keys)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items = [self._eval(e) for e in node.elts]
            if any(i.value is UNKNOWN for i in items):
                return V(UNKNOWN, _merge(*items))
            return V([i.value for i in items], _merge(*items))
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Dict):
            if node in self.capture:
                self.captured[node] = {
                    k.value: self._eval(v)
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)
                }
            return V(UNKNOWN)
        if isinstance(node, ast.IfExp):
            test = self._truth(self._eval(node.test))
            if test is UNKNOWN:
                return V(UNKNOWN)
            return self._eval(node.body if test else node.orelse)
        if isinstance(node, ast.JoinedStr):
            text = self._message(node)
            return V(text if text is not None else UNKNOWN)
        return V(UNKNOWN)

    def _binop(self, op, left: V, right: V, node) -> V:
        keys = _merge(left, right)
        if left.value is UNKNOWN or right.value is UNKNOWN or op not in _BIN:
            return V(UNKNOWN, keys)
        try:
            return V(_BIN[op](left.value, right.value), keys)
        except ZeroDivisionError:
            raise _Raised(
                Failure(node.lineno, "ZeroDivisionError", f"{ast.unparse(node)}: division by zero", list(keys))
            ) from None
        except TypeError:
            if left.value is None or right.value is None:
                raise _Raised(
                    Failure(node.lineno, "TypeError", f"{ast.unparse(node)}: an operand is None", list(keys))
                ) from None
            return V(UNKNOWN, keys)

    def _boolop(self, node: ast.BoolOp) -> V:
        seen: list[V] = []
        result: object = None
        for value_node in node.values:
            v = self._eval(value_node)
            seen.append(v)
            t = self._truth(v)
            if t is UNKNOWN:
                return V(UNKNOWN, _merge(*seen))
            result = v.value
            if isinstance(node.op, ast.And) and not t:
                return V(result, _merge(*seen))
            if isinstance(node.op, ast.Or) and t:
                return V(result, _merge(*seen))
        return V(result, _merge(*seen))

    def _compare(self, node: ast.Compare) -> V:
        left = self._eval(node.left)
        seen = [left]
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self._eval(comp)
            seen.append(right)
            if left.value is UNKNOWN or right.value is UNKNOWN or type(op) not in _CMP:
                return V(UNKNOWN, _merge(*seen))
            try:
                ok = _CMP[type(op)](left.value, right.value)
            except TypeError:
                if left.value is None or right.value is None:
                    raise _Raised(
                        Failure(
                            node.lineno, "TypeError", f"{ast.unparse(node)}: an operand is None", list(_merge(*seen))
                        )
                    ) from None
                return V(UNKNOWN, _merge(*seen))
            if not ok:
                return V(False, _merge(*seen))
            left = right
        return V(True, _merge(*seen))

    def _call(self, node: ast.Call) -> V:
        name = ast.unparse(node.func)
        if node in self.capture:
            self.captured[node] = {kw.arg: self._eval(kw.value) for kw in node.keywords if kw.arg}
        given = self.calls.get(name)
        if given is not None:
            return given(self, node) if callable(given) else V(given)
        func = node.func
        if isinstance(func, ast.Attribute):
            base = self._eval(func.value).value
            if func.attr == "get" and node.args and isinstance(base, Node):
                key = self._eval(node.args[0]).value
                if isinstance(key, str):
                    default = self._eval(node.args[1]) if len(node.args) > 1 else V(None)
                    return self.config(_join(base.path, key), default)
                return V(UNKNOWN)
            if isinstance(base, Obj) and func.attr in base.methods:
                return self._follow(base, base.methods[func.attr])
            return V(UNKNOWN)
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr") and len(node.args) >= 2:
            base = self._eval(node.args[0]).value
            attr = self._eval(node.args[1]).value
            if not isinstance(base, Obj) or not isinstance(attr, str):
                return V(UNKNOWN)
            if func.id == "hasattr":
                found = base.attrs.get(attr)
                return V(UNKNOWN) if found is not None and found.value is UNKNOWN else V(found is not None)
            if attr in base.attrs:
                return base.attrs[attr]
            return self._eval(node.args[2]) if len(node.args) > 2 else V(UNKNOWN)
        if isinstance(func, ast.Name) and func.id in self.functions:
            return self._apply(self.functions[func.id], node)
        if isinstance(func, ast.Name) and func.id in _BUILTINS and node.args:
            args = [self._eval(a) for a in node.args]
            if any(a.value is UNKNOWN for a in args):
                return V(UNKNOWN, _merge(*args))
            try:
                return V(_BUILTINS[func.id](*[a.value for a in args]), _merge(*args))
            except (TypeError, ValueError):
                return V(UNKNOWN, _merge(*args))
        return V(UNKNOWN)

    def _follow(self, obj: Obj, func: ast.FunctionDef) -> V:
        """A method of `self` the code calls: run its body (arguments unknown), return its value."""
        if self.depth >= 4:
            return V(UNKNOWN)
        saved = self.locals
        params = {a.arg: V(UNKNOWN) for a in func.args.args}
        if func.args.args:
            params[func.args.args[0].arg] = V(obj)
        self.locals = params
        self.depth += 1
        try:
            self._block(func.body)
            return V(None)
        except _Return as ret:
            return ret.value
        finally:
            self.depth -= 1
            self.locals = saved

    def _apply(self, func: ast.FunctionDef, node: ast.Call) -> V:
        """A module-level function of verl the code calls: its arguments bound, its value."""
        if self.depth >= 4:
            return V(UNKNOWN)
        names = [a.arg for a in func.args.args]
        params = {n: V(UNKNOWN) for n in names}
        for name, arg in zip(names, node.args, strict=False):
            params[name] = self._eval(arg)
        for kw in node.keywords:
            if kw.arg in params:
                params[kw.arg] = self._eval(kw.value)
        saved = self.locals
        self.locals = params
        self.depth += 1
        try:
            self._block(func.body)
            return V(None)
        except _Return as ret:
            return ret.value
        finally:
            self.depth -= 1
            self.locals = saved

    def call_function(self, func: ast.FunctionDef, params: dict[str, V]) -> V:
        """Run a function whose value is wanted (`get_data_parallel_size`): its return value, or
        UNKNOWN when it fails or ends without one."""
        self.locals = dict(params)
        try:
            self._block(func.body)
        except _Return as ret:
            return ret.value
        except (_Stop, _Raised):
            pass
        return V(UNKNOWN)

    def _truth(self, v: V):
        if v.value is UNKNOWN or isinstance(v.value, Node | Obj):
            return UNKNOWN if v.value is UNKNOWN else True
        try:
            return bool(v.value)
        except Exception:  # noqa: BLE001 - a value whose truth we cannot take
            return UNKNOWN

    def _message(self, node: ast.expr) -> str | None:
        """verl's message: a string, or an f-string with the values we know filled in."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return " ".join(node.value.split())
        if isinstance(node, ast.JoinedStr):
            parts = []
            for piece in node.values:
                if isinstance(piece, ast.Constant):
                    parts.append(str(piece.value))
                elif isinstance(piece, ast.FormattedValue):
                    v = self._eval(piece.value).value
                    shown = "?" if v is UNKNOWN or isinstance(v, Node | Obj) else str(v)
                    parts.append(shown)
            return " ".join("".join(parts).split())
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self._message(node.left), self._message(node.right)
            return None if left is None or right is None else left + right
        return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


_BUILTINS = {"int": int, "bool": bool, "min": min, "max": max, "len": len, "float": float, "str": str}


def _unknown_value(value) -> bool:
    from ..values import is_unknown

    return is_unknown(value)
