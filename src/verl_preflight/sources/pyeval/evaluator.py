"""The evaluator: its state, its entry points, the config it reads and writes, the failures it
records. Statements, expressions and objects are its parts (statements.py, expressions.py,
objects.py)."""

from __future__ import annotations

import ast

from .expressions import Expressions
from .model import (
    _TAINT,
    UNKNOWN,
    Assigned,
    Failure,
    Functions,
    Node,
    V,
    _chain,
    _folded,
    _Frame,
    _Function,
    _Guard,
    _interpolation_sources,
    _is_null,
    _plain,
    _plain_value,
    _Raised,
    _Return,
    _Stop,
    _truth,
)
from .objects import Objects
from .statements import Statements


class Evaluator(Statements, Expressions, Objects):
    """Evaluates verl's code over one launch's config (the package's docstring)."""


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
