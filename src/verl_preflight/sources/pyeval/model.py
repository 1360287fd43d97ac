"""What the evaluator computes with: values (V, UNKNOWN), failures, config nodes and objects, the
unwinding of a run (`_Stop`, `_Raised`, `_Break`, ...), and the helpers and size budgets its parts
share."""

from __future__ import annotations

import abc
import ast
import collections.abc
import operator
import re
from dataclasses import dataclass, field

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


class EmptyView:
    """The view of a launch that sets nothing: no key has a value (code run over no config, as
    the fuzz target and the soundness test run it)."""

    tree: dict = {}

    def raw(self, key):
        return None

    def value(self, key):
        return None

    def setting(self, key):
        return None


class Node:
    """A section of the launch's config (`config.actor_rollout_ref.actor`)."""

    def __init__(self, ev, path: str):  # ev: the Evaluator
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




class _Method:
    """A method of a plain value, a config node or a built section: get, keys, lower, ..."""

    def __init__(self, owner, name: str):
        self.owner = owner
        self.name = name

    def call(self, args: list, ev):
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
    from ...core.values import Unknown

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
