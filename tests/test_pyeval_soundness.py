"""The evaluator of verl's checks (sources/pyeval/) against CPython, on generated programs
of its subset (issue 46 item 3): assignments, `+=`, arithmetic that can divide by zero, `if`
and `else`, `for` over lists and ranges with `break`, `continue` and `else`, `try`/`finally`,
`assert` and `raise`.

- Every input known: the evaluator's outcome is CPython's (the same exception at the same
  line, or none).
- An input unknown (`u`): any failure the evaluator reports, CPython raises at that line for
  some value of `u` (perhaps replaced by one a `finally` raises); an unknown never becomes a
  failure CPython would not raise.
"""

from __future__ import annotations

import ast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verl_preflight.sources.pyeval import UNKNOWN, EmptyView, Evaluator, Obj, V

NAMES = ("a", "b", "c")
KINDS = ("AssertionError", "ValueError", "ZeroDivisionError", "TypeError")
U_VALUES = [*range(-30, 31), 100, -100, 10_000]  # the values of `u` CPython is run with


def _exprs(with_u: bool):
    leaves = st.one_of(st.integers(-3, 5).map(str), st.sampled_from(NAMES + (("u",) if with_u else ())))

    def grow(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "//", "%"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(inner, st.sampled_from(["<", "<=", "==", "!=", ">"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            inner.map(lambda e: f"(not {e})"),
            st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        )

    return st.recursive(leaves, grow, max_leaves=4)


@st.composite
def _block(draw, depth: int, in_loop: bool, with_u: bool) -> list[str]:
    """Lines of a block (indented by the caller)."""
    expr = _exprs(with_u)
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["assign", "augassign", "assert", "raise"]
        if depth < 2:
            kinds += ["if", "for", "try"]
        if in_loop:
            kinds += ["break", "continue"]
        kind = draw(st.sampled_from(kinds))
        if kind == "assign":
            lines.append(f"{draw(st.sampled_from(NAMES))} = {draw(expr)}")
        elif kind == "augassign":
            lines.append(f"{draw(st.sampled_from(NAMES))} += {draw(expr)}")
        elif kind == "assert":
            lines.append(f"assert {draw(expr)}")
        elif kind == "raise":
            lines += [f"if {draw(expr)}:", "    raise ValueError('no')"]
        elif kind in ("break", "continue"):
            lines += [f"if {draw(expr)}:", f"    {kind}"]
        elif kind == "if":
            lines.append(f"if {draw(expr)}:")
            lines += ["    " + ln for ln in draw(_block(depth + 1, in_loop, with_u))]
            if draw(st.booleans()):
                lines.append("else:")
                lines += ["    " + ln for ln in draw(_block(depth + 1, in_loop, with_u))]
        elif kind == "for":
            over = draw(st.one_of(st.integers(0, 4).map(lambda n: f"range({n})"),
                                  st.lists(st.integers(-2, 3), max_size=4).map(str)))
            lines.append(f"for {draw(st.sampled_from(NAMES))} in {over}:")
            lines += ["    " + ln for ln in draw(_block(depth + 1, True, with_u))]
            if draw(st.booleans()):
                lines.append("else:")
                lines += ["    " + ln for ln in draw(_block(depth + 1, in_loop, with_u))]
        else:  # try / finally
            lines.append("try:")
            lines += ["    " + ln for ln in draw(_block(depth + 1, in_loop, with_u))]
            lines.append("finally:")
            lines += ["    " + ln for ln in draw(_block(depth + 1, in_loop, with_u))]
    return lines


def _program(lines: list[str]) -> str:
    body = ["a = 1", "b = 2", "c = 0", *lines]
    return "def f(u):\n" + "".join(f"    {ln}\n" for ln in body)


def _cpython(code: str, u, raised: set | None = None) -> tuple[str, int] | None:
    """(the exception, the line of `code` it was raised at) of f(u), or None; `raised`: also
    given every exception raised on the way (one a `finally` replaced: its `__context__`)."""
    scope: dict = {}
    exec(compile(code, "<generated>", "exec"), scope)  # noqa: S102 (the test's own generated program)
    try:
        scope["f"](u)
    except Exception as err:  # noqa: BLE001 (any exception is an outcome to compare)
        chain = []
        while err is not None:
            tb = err.__traceback__
            while tb.tb_next is not None:
                tb = tb.tb_next
            chain.append((type(err).__name__, tb.tb_lineno))
            err = err.__context__
        if raised is not None:
            raised.update(chain)
        return chain[0]
    return None


class _Undecided:
    """The evaluator's `watch`: the lines of the statements it could not decide, whether they
    raise (one that reads a name it does not know: `assert 0 * u`, `a // (0 * u)`; one in a
    branch not followed)."""

    def __init__(self, func):
        self.lines: set = set()
        self.nodes = {n for n in ast.walk(func) if isinstance(n, ast.stmt) and n is not func}

    def __call__(self, node, scope, module, reached) -> None:
        own = [node.test] if isinstance(node, ast.If | ast.Assert) else [] if isinstance(node, ast.For | ast.Try) else [node]
        read = {n.id for part in own for n in ast.walk(part) if isinstance(n, ast.Name)}
        if not reached or any(scope.get(name) is UNKNOWN for name in read):
            self.lines.add(node.lineno)


def _evaluated(code: str, u, undecided: set | None = None) -> tuple[str, int] | None:
    ev = Evaluator(EmptyView(), max_steps=100_000)
    func = ast.parse(code).body[0]
    ev.watch = _Undecided(func)
    ev.run(func.body, {"self": V(Obj({})), "u": V(u)})
    if undecided is not None:
        undecided.update(ev.watch.lines)
    return (ev.failures[0].kind, ev.failures[0].line) if ev.failures else None


SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@SETTINGS
@given(_block(0, False, False))
def test_with_every_input_known_the_outcome_is_cpythons(lines):
    code = _program(lines)
    expected = _cpython(code, 0)
    if expected is not None and expected[0] not in KINDS:
        return  # (an exception outside the subset's: none is generated)
    assert _evaluated(code, 0) == expected, code


@SETTINGS
@given(_block(0, False, True))
def test_with_an_input_unknown_no_failure_cpython_would_not_raise(lines):
    """A failure reported with `u` unknown is one CPython raises for some `u` (perhaps replaced
    by one a `finally` raises), or CPython stops before it, for every `u` tried, at a check the
    evaluator could not decide and passed over (as `assert 0 * u`: any value, it supposes)."""
    code = _program(lines)
    undecided: set = set()
    found = _evaluated(code, UNKNOWN, undecided)
    if found is not None:
        raised: set = set()
        outcomes = [_cpython(code, u, raised) for u in U_VALUES]
        assert found in raised or all(o is not None and o[1] in undecided for o in outcomes), code


def test_the_cases_that_were_wrong():
    """Found by the tests above or by issue 46 (break and continue were no-ops)."""
    cases = [
        ("for a in [1, 2, 3]:\n    if a > 1:\n        break\nassert a == 2", None),
        ("for a in [1, 2]:\n    pass\nelse:\n    b = 5\nassert b == 5", None),
        ("for a in [1, 2]:\n    break\nelse:\n    b = 5\nassert b == 2", None),
        ("for a in [1, 2]:\n    try:\n        continue\n    finally:\n        b = 7\nassert b == 7", None),
        ("for a in [1, 2]:\n    try:\n        break\n    finally:\n        c = c + 1\nassert c == 2", ("AssertionError", 10)),
    ]
    for lines, expected in cases:
        code = _program(lines.splitlines())
        assert _cpython(code, 0) == expected, code
        assert _evaluated(code, 0) == expected, code
    # a `break` under an unknown test: the loop's turns are unknown, nothing after it is invented
    code = _program("for a in [1, 2, 3]:\n    if u > 0:\n        break\nassert a == 3".splitlines())
    assert _evaluated(code, UNKNOWN) is None
