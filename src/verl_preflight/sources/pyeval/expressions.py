"""Expressions as the evaluator computes them: constants, names, arithmetic and comparisons
on known values (sized before they are built), f-strings, subscripts, boolean operators."""

from __future__ import annotations

import ast

from .model import (
    _BINOPS,
    _BUILTINS,
    _COMPARES,
    _TAINT,
    UNKNOWN,
    Node,
    Obj,
    V,
    _Class,
    _fits,
    _Function,
    _hashable,
    _identity,
    _membership,
    _plain_value,
    _truth,
    _widths_fit,
)
from .objects import Objects


class Expressions:
    """The expressions of `Evaluator` (a part of it)."""

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


_EXPRESSIONS = {
    ast.Constant: Expressions.constant,
    ast.Name: Expressions.name_expr,
    ast.Attribute: Expressions.attribute_expr,
    ast.Subscript: Expressions.subscript,
    ast.BinOp: Expressions.binop_expr,
    ast.UnaryOp: Expressions.unary,
    ast.BoolOp: Expressions.boolop,
    ast.Compare: Expressions.compare,
    ast.IfExp: Expressions.ifexp,
    ast.JoinedStr: Expressions.fstring,
    ast.FormattedValue: Expressions.formatted_value,
    ast.List: Expressions.sequence,
    ast.Tuple: Expressions.sequence,
    ast.Set: Expressions.sequence,
    ast.Dict: Expressions.dict_expr,
    ast.Call: Objects.call_expr,
}

