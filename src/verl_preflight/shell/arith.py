"""Bash arithmetic (`$((...))`, `((...))`, `let`) over tree-sitter nodes.

Integers are 64-bit and wrap like bash's: every value is wrapped as it is made
(literals of any length too), and `**` is computed by squaring modulo 2**64, so no
Python number ever grows past 128 bits. A value that depends on something unknown
is None; division by zero and a negative exponent raise `ArithError` (bash reports
it and the command fails).
"""

from __future__ import annotations

import re

_MASK = (1 << 64) - 1
_INT_RE = re.compile(r"^\s*([+-]?)\s*(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*|[0-9]+#[0-9a-zA-Z@_]+)\s*$")
_CHANGES = re.compile(r"\+\+|--|(?<![=!<>])=(?!=)")  # an expression that assigns
_NAME_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*$")


class ArithError(Exception):
    """An error bash reports (division by 0, assignment to a non-variable)."""


class Unsupported(Exception):
    """A form this evaluator does not read: its value is unknown, not an error."""


def wrap(n: int) -> int:
    n &= _MASK
    return n - (1 << 64) if n >> 63 else n


def parse_int(text: str) -> int | None:
    """A bash integer literal (decimal, 0x hex, 0 octal, base#digits); None if not one."""
    m = _INT_RE.match(text)
    if not m:
        return None
    sign, body = m.groups()
    try:
        if "#" in body:
            base_s, digits = body.split("#", 1)
            base = int(base_s)
            if not 2 <= base <= 64:
                return None
            value = 0
            for ch in digits:
                if ch.isdigit():
                    d = int(ch)
                elif "a" <= ch <= "z":
                    d = ord(ch) - ord("a") + 10
                elif "A" <= ch <= "Z":
                    d = ord(ch) - ord("A") + (36 if base > 36 else 10)
                elif ch == "@":
                    d = 62
                else:
                    d = 63
                if d >= base:
                    return None
                value = (value * base + d) & _MASK  # wraps as it is read: no number grows
        elif body[:2] in ("0x", "0X"):
            value = int(body, 16)
        elif len(body) > 1 and body[0] == "0":
            value = int(body, 8)
        else:
            value = _decimal(body)
    except ValueError:
        return None
    return wrap(-value if sign == "-" else value)


def _decimal(digits: str) -> int:
    """Decimal digits modulo 2**64, read 18 at a time (any length: no big number is made)."""
    value = 0
    for start in range(0, len(digits), 18):
        part = digits[start : start + 18]
        value = (value * 10 ** len(part) + int(part)) & _MASK
    return value


def _power(a: int, b: int) -> int:
    """a**b as bash computes it: by squaring, modulo 2**64 (`7**99999999999` is instant)."""
    if b < 0:
        raise ArithError("exponent less than 0")
    return pow(a, b, 1 << 64)


# Operands are 64-bit (every value is wrapped when it is made), so no operator below makes a
# number of more than 128 bits before apply_binary wraps it again.
_BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "**": _power,
    "<<": lambda a, b: a << (b & 63),
    ">>": lambda a, b: a >> (b & 63),
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    ">": lambda a, b: int(a > b),
    "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b),
}


def _div(a: int, b: int, op: str) -> int:
    if b == 0:
        raise ArithError("division by 0")
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return q if op == "/" else a - q * b


def apply_binary(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        return wrap(_div(a, b, op))
    return wrap(_BINARY[op](a, b))


_ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}


class Arithmetic:
    """Evaluates arithmetic nodes; `env` provides get(name) -> str|None|False,
    set(name, int) and set_element(text of NAME[INDEX], int). get returns False for an
    unknown value, None for unset; a value None set is unknown."""

    def __init__(self, env, text_of, expand_text, max_depth: int = 64):
        self.env = env
        self.text_of = text_of  # node -> source text
        self.expand_text = expand_text  # node -> str | None (None: unknown)
        self.max_depth = max_depth

    def value_of_name(self, name: str, depth: int = 0) -> int | None:
        raw = self.env.get(name)
        if raw is False:
            return None
        if raw is None or raw.strip() == "":
            return 0
        return self.value_of_text(raw, depth + 1)

    def value_of_text(self, text: str, depth: int = 0) -> int | None:
        n = parse_int(text)
        if n is not None:
            return n
        m = _NAME_RE.match(text)
        if m and depth < self.max_depth:
            return self.value_of_name(m.group(1), depth)
        if depth < self.max_depth and text.strip():
            return self.env.eval_text(text)
        return None

    def eval(self, node) -> int | None:
        if node is None:
            raise Unsupported("a missing operand")
        t = node.type
        if t == "variable_assignment":  # `for ((i = 0; ...))`
            return self._assignment(node)
        if t == "number":
            n = parse_int(self.text_of(node))
            if n is None:
                text = self.expand_text(node)
                return None if text is None else self.value_of_text(text)
            return n
        if t in ("variable_name", "word"):
            text = self.text_of(node)
            if _NAME_RE.match(text):
                return self.value_of_name(text.strip())
            return self.value_of_text(text)
        if t in (
            "simple_expansion",
            "expansion",
            "string",
            "raw_string",
            "concatenation",
            "command_substitution",
            "arithmetic_expansion",
        ):
            text = self.expand_text(node)
            return None if text is None else self.value_of_text(text)
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children if c.type != "comment"]
            result = None
            for c in inner:
                result = self.eval(c)
            return result
        if t == "ternary_expression":
            cond = self.eval(node.child_by_field_name("condition"))
            if cond is None:
                return None
            branch = "consequence" if cond else "alternative"
            return self.eval(node.child_by_field_name(branch))
        if t == "unary_expression":
            op = self.text_of(node.children[0])
            operand = node.children[-1]
            if op in ("++", "--"):
                return self._increment(operand, 1 if op == "++" else -1, prefix=True)
            return self._prefix(op, operand)
        if t == "postfix_expression":
            op = self.text_of(node.children[-1])
            return self._increment(node.children[0], 1 if op == "++" else -1, prefix=False)
        if t == "binary_expression":
            return self._binary(node)
        if t == "subscript":
            text = self.expand_text(node)
            if text is None:
                return None
            return 0 if text.strip() == "" else self.value_of_text(text)
        raise Unsupported(f"unsupported arithmetic: {self.text_of(node)[:30]}")

    def _assignment(self, node) -> int | None:
        target = node.child_by_field_name("name")
        self._check_target(target, "assignment needs a variable")
        value_node = node.child_by_field_name("value")
        value = self.eval(value_node) if value_node is not None else 0
        self._store(target, value)
        return value

    def _prefix(self, op: str, operand) -> int | None:
        """A prefix operator. tree-sitter-bash binds it too loosely (`-7 / 2 + 5`
        comes back as `-(7 / 2 + 5)`); bash binds it to the leftmost operand."""
        if operand.type == "binary_expression":
            bin_op = operand.child_by_field_name("operator")
            if bin_op is not None and self.text_of(bin_op) not in _ASSIGN_OPS:
                left = self._prefix(op, operand.child_by_field_name("left"))
                return self._binary(operand, left_value=left)
        v = self.eval(operand)
        if v is None:
            return None
        return {"-": lambda x: wrap(-x), "+": lambda x: x, "!": lambda x: int(not x), "~": lambda x: wrap(~x)}.get(
            op, lambda x: None
        )(v)

    def _name(self, node) -> str | None:
        if node is None:
            return None
        text = self.text_of(node).strip()
        return text if _NAME_RE.match(text) else None

    def _check_target(self, node, message: str) -> None:
        """A variable or an array element (`A[i]`, `T[k]`) can be assigned; nothing else."""
        if self._name(node) is None and (node is None or node.type != "subscript"):
            raise ArithError(message)
        if node.type == "subscript" and _CHANGES.search(self.text_of(node)):
            # `A[i++] += 1` reads and sets the element with one index: not read here
            raise Unsupported(f"unsupported arithmetic: {self.text_of(node)[:30]}")

    def _current(self, node) -> int | None:
        name = self._name(node)
        return self.value_of_name(name) if name is not None else self.eval(node)

    def _store(self, node, value: int | None) -> None:
        name = self._name(node)
        if name is not None:
            self.env.set(name, value)
        else:  # an array element: set as the assignment `A[i]=value` sets it
            self.env.set_element(self.text_of(node), value)

    def _increment(self, node, delta: int, prefix: bool) -> int | None:
        self._check_target(node, "++/-- needs a variable")
        old = self._current(node)
        if old is None:
            self._store(node, None)
            return None
        new = wrap(old + delta)
        self._store(node, new)
        return new if prefix else old

    def _binary(self, node, left_value=False) -> int | None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        op_node = node.child_by_field_name("operator")
        op = self.text_of(op_node) if op_node is not None else ""
        if op in _ASSIGN_OPS:
            self._check_target(left, "assignment needs a variable")
            rhs = self.eval(right)
            if op == "=":
                value = rhs
            else:
                cur = self._current(left)
                value = None if cur is None or rhs is None else apply_binary(op[:-1], cur, rhs)
            self._store(left, value)
            return value

        def lhs():
            return self.eval(left) if left_value is False else left_value

        if op == "&&":
            a = lhs()
            if a == 0:
                return 0
            b = self.eval(right)
            return None if a is None or b is None else int(bool(b))
        if op == "||":
            a = lhs()
            if a is not None and a != 0:
                return 1
            b = self.eval(right)
            return None if a is None or b is None else int(bool(b))
        if op == ",":
            lhs()
            return self.eval(right)
        a = lhs()
        b = self.eval(right)
        if a is None or b is None:
            return None
        if op not in _BINARY and op not in ("/", "%"):
            raise Unsupported(f"unsupported operator {op}")
        return apply_binary(op, a, b)
