"""`test`, `[ ]` and `[[ ]]`: three-valued (True, False, None for unknown)."""

from __future__ import annotations

import re

from .arith import parse_int
from .words import Field

BINARY_OPS = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef"}
INT_OPS = {
    "-eq": lambda a, b: a == b,
    "-ne": lambda a, b: a != b,
    "-lt": lambda a, b: a < b,
    "-le": lambda a, b: a <= b,
    "-gt": lambda a, b: a > b,
    "-ge": lambda a, b: a >= b,
}


class TestError(Exception):
    """A malformed test: bash prints an error and the status is 2."""


def not3(v):
    return None if v is None else not v


def and3(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def or3(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def compare(op: str, left: Field, right: Field, right_regex=None):
    """A binary comparison; `right_regex` is the compiled pattern for ==/!= in [[ ]]."""
    if op in ("=", "==", "!="):
        if right_regex is not None:
            if not left.known:
                return None
            result = right_regex.fullmatch(left.value) is not None
        else:
            if not left.known or not right.known:
                return None
            result = left.value == right.value
        return result if op != "!=" else not result
    if op in INT_OPS:
        if not left.known or not right.known:
            return None
        a, b = parse_int(left.value or "0"), parse_int(right.value or "0")
        if a is None or b is None:
            raise TestError(f"integer expression expected: {left.value!r} {op} {right.value!r}")
        return INT_OPS[op](a, b)
    if op in ("<", ">"):
        if not left.known or not right.known:
            return None
        return left.value < right.value if op == "<" else left.value > right.value
    return None  # -nt -ot -ef: files


def unary(op: str, operand: Field):
    if op == "-z":
        if operand.known:
            return operand.value == ""
        return None
    if op == "-n":
        if operand.known:
            return operand.value != ""
        return None
    if op == "-v":
        return None
    return None  # file tests: the file system of the target machine is unknown


def test_argv(args: list[Field]):
    """POSIX `test` over expanded arguments (what `test` and `[` receive)."""
    texts = [a.value if a.known else None for a in args]

    def one(i):
        return args[i].known and args[i].value != "" if args[i].known else None

    n = len(args)
    if n == 0:
        return False
    if n == 1:
        return one(0)
    if n == 2:
        if texts[0] == "!":
            return not3(one(1))
        if texts[0] is not None and texts[0].startswith("-"):
            return unary(texts[0], args[1])
        raise TestError("unary operator expected")
    if n == 3:
        if texts[1] in BINARY_OPS:
            return compare(texts[1], args[0], args[2])
        if texts[1] == "-a":
            return and3(one(0), one(2))
        if texts[1] == "-o":
            return or3(one(0), one(2))
        if texts[0] == "!":
            return not3(test_argv(args[1:]))
        if texts[0] == "(" and texts[2] == ")":
            return one(1)
        raise TestError("binary operator expected")
    if n == 4 and texts[0] == "!":
        return not3(test_argv(args[1:]))
    return _expr(args, texts)


def _expr(args, texts):
    """-o / -a / ! / ( ) with more than four arguments."""
    pos = 0

    def primary():
        nonlocal pos
        if pos < len(texts) and texts[pos] == "!":
            pos += 1
            return not3(primary())
        if pos < len(texts) and texts[pos] == "(":
            pos += 1
            v = disj()
            if pos < len(texts) and texts[pos] == ")":
                pos += 1
            return v
        if pos + 2 < len(texts) + 0 and texts[pos + 1] in BINARY_OPS:
            v = compare(texts[pos + 1], args[pos], args[pos + 2])
            pos += 3
            return v
        if (
            pos + 1 < len(texts)
            and texts[pos] is not None
            and texts[pos].startswith("-")
            and texts[pos] != "-a"
            and texts[pos] != "-o"
        ):
            v = unary(texts[pos], args[pos + 1])
            pos += 2
            return v
        if pos < len(texts):
            v = args[pos].value != "" if args[pos].known else None
            pos += 1
            return v
        raise TestError("argument expected")

    def conj():
        nonlocal pos
        v = primary()
        while pos < len(texts) and texts[pos] == "-a":
            pos += 1
            v = and3(v, primary())
        return v

    def disj():
        nonlocal pos
        v = conj()
        while pos < len(texts) and texts[pos] == "-o":
            pos += 1
            v = or3(v, conj())
        return v

    return disj()


def regex_match(text: Field, pattern: Field):
    """[[ x =~ re ]]: Python's re stands in for POSIX ERE."""
    if not text.known or not pattern.known:
        return None
    try:
        return re.search(pattern.value, text.value) is not None
    except re.error:
        return False


__all__ = ["TestError", "and3", "compare", "not3", "or3", "regex_match", "test_argv", "unary"]
