"""Statements of verl's code as the evaluator runs them: assignments, `if`, `for` with `break`,
`continue` and `else`, `with`, `try`/`finally`, `assert`, `raise`, `return`; what a statement
not followed may assign becomes unknown (havoc)."""

from __future__ import annotations

import ast

from .model import (
    _MAX_TURNS,
    _TAINT,
    UNKNOWN,
    Node,
    Obj,
    _Break,
    _Continue,
    _Frame,
    _Function,
    _Guard,
    _havoc_walk,
    _jumps,
    _plain_value,
    _Raised,
    _Return,
    _Stop,
    _truth,
)


class Statements:
    """The statements of `Evaluator` (a part of it: it is the only class that mixes this in)."""

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


_STATEMENTS = {
    ast.Expr: Statements.expr_stmt,
    ast.Assign: Statements.assign_stmt,
    ast.AnnAssign: Statements.annassign_stmt,
    ast.AugAssign: Statements.augassign_stmt,
    ast.If: Statements.if_stmt,
    ast.Assert: Statements.assert_stmt,
    ast.Raise: Statements.raise_stmt,
    ast.Return: Statements.return_stmt,
    ast.FunctionDef: Statements.def_stmt,
    ast.For: Statements.for_stmt,
    ast.With: Statements.with_stmt,
    ast.Try: Statements.try_stmt,
    ast.Break: Statements.break_stmt,
    ast.Continue: Statements.continue_stmt,
    ast.ImportFrom: Statements.import_from,
    ast.Pass: Statements.nothing,
    ast.Import: Statements.nothing,
    ast.Global: Statements.nothing,
    ast.Nonlocal: Statements.nothing,
}

