"""A script's result as plain JSON and back: data only, so a cache entry can never run code.

`to_plain` turns a result (the tool's own dataclasses holding strings, numbers, lists,
tuples, sets and dicts) into JSON types; `from_plain` builds it again. Only dataclasses
defined in this package are rebuilt, field by field, without calling any constructor;
anything else, a missing or extra field, a reference forward, or an unknown tag raises
`NotPlain` (the cache then counts a miss). Sentinels (values.OTHER) are named, never built.

The document is {"classes": [...], "objects": [...], "root": value}. Each dataclass is
written once in `objects`, as [its class's index in `classes`, its fields' values in the
class's order] (equal ones, as the many profiles of a script hold, share one entry:
exactly equal, field by field as JSON), and referred to by its index; an entry refers
only to entries before it.

    [..]                  list
    {"t": [..]}           tuple        {"s": [..]}  set       {"f": [..]}  frozenset
    {"m": {k: v}}         dict with string keys     {"d": [[k, v], ..]}   any other dict
    {"r": n}              objects[n]:  [class index, field value, ...]
    {"o": "mod:NAME"}     a sentinel of this package
    {"e": "mod:Enum", "n": "MEMBER"}   a member of an enumeration of this package
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import operator
import sys

_PACKAGE = __name__.split(".")[0]  # the package (this module is in its store/)
_ATOMS = (str, int, float, bool, type(None))
_ATOM_TYPES = frozenset(_ATOMS)




class NotPlain(Exception):
    pass


def _sentinels() -> dict:
    from ..core import values

    return {id(values.OTHER): "values:OTHER"}


class _Writer:
    def __init__(self):
        self.classes: list = []  # "mod:Class"
        self.class_index: dict = {}
        self.objects: list = []
        self.index: dict[str, int] = {}  # an object's entry as text -> its index
        self.seen: dict[int, tuple] = {}  # id -> (its reference, the object, kept alive)
        self.sentinels = _sentinels()
        self.dataclasses: set = set()  # the types found to be this package's dataclasses (not enums)

    def value(self, obj):
        t = type(obj)
        if t in _ATOM_TYPES:
            return obj
        if t is list:
            return [x if type(x) in _ATOM_TYPES else self.value(x) for x in obj]
        if t is tuple:
            return {"t": [x if type(x) in _ATOM_TYPES else self.value(x) for x in obj]}
        if t is dict:
            if all(type(k) is str for k in obj):
                return {"m": {k: v if type(v) in _ATOM_TYPES else self.value(v) for k, v in obj.items()}}
            return {"d": [[self.value(k), self.value(v)] for k, v in obj.items()]}
        if t is set or t is frozenset:
            return {"s" if t is set else "f": [x if type(x) in _ATOM_TYPES else self.value(x) for x in obj]}
        name = self.sentinels.get(id(obj))
        if name is not None:
            return {"o": name}
        if t in self.dataclasses:
            return self.dataclass(obj, t)
        if not t.__module__.startswith(_PACKAGE + "."):
            raise NotPlain(f"{t.__module__}.{t.__qualname__} is not kept in the cache")
        if isinstance(obj, enum.Enum):
            return {"e": f"{t.__module__[len(_PACKAGE) + 1:]}:{t.__qualname__}", "n": obj.name}
        if dataclasses.is_dataclass(obj):
            self.dataclasses.add(t)
            return self.dataclass(obj, t)
        raise NotPlain(f"{t.__module__}.{t.__qualname__} is not kept in the cache")

    def dataclass(self, obj, t):
        known = self.seen.get(id(obj))
        if known is not None:
            return known[0]
        found = self.class_index.get(t)
        if found is None:
            names = tuple(f.name for f in dataclasses.fields(obj))
            found = self.class_index[t] = len(self.classes), _fields_getter(names)
            self.classes.append(f"{t.__module__[len(_PACKAGE) + 1:]}:{t.__qualname__}")
        c, fields_of = found
        entry = [c]
        for v in fields_of(obj):
            entry.append(v if type(v) in _ATOM_TYPES else self.value(v))
        text = repr(entry)  # (JSON types only: equal reprs are equal JSON, and repr is cheaper to make)
        n = self.index.get(text)
        if n is None:
            n = self.index[text] = len(self.objects)
            self.objects.append(entry)
        ref = {"r": n}
        self.seen[id(obj)] = (ref, obj)
        return ref


def _fields_getter(names: tuple):
    """A function from an object to the tuple of its `names` fields (attrgetter, one call)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def to_plain(obj) -> dict:
    writer = _Writer()
    root = writer.value(obj)
    return {"classes": writer.classes, "objects": writer.objects, "root": root}


_CLASSES: dict = {}


def _class(name: str):
    cls = _CLASSES.get(name)
    if cls is not None:
        return cls
    cls = _import(name)
    if not isinstance(cls, type) or not dataclasses.is_dataclass(cls):
        raise NotPlain(f"not one of the tool's dataclasses: {name!r}")
    _CLASSES[name] = cls, tuple(f.name for f in dataclasses.fields(cls)), "__slots__" not in cls.__dict__
    return _CLASSES[name]


def _import(name):
    """The class `module:Qual.Name` of this package (its own modules only), or NotPlain."""
    module, _, qualname = name.partition(":") if isinstance(name, str) else ("", "", "")
    if not module or not qualname or not all(p.isidentifier() for p in (*module.split("."), *qualname.split("."))):
        raise NotPlain(f"not a class name: {name!r}")
    full = f"{_PACKAGE}.{module}"
    try:
        mod = sys.modules.get(full) or importlib.import_module(full)  # the tool's own modules only
    except ImportError as err:
        raise NotPlain(str(err)) from None
    cls = mod
    for part in qualname.split("."):
        cls = getattr(cls, part, None)
    if not isinstance(cls, type) or cls.__module__ != full:
        raise NotPlain(f"not a class of the tool: {name!r}")
    return cls


def _member(name, member) -> enum.Enum:
    cls = _import(name)
    if not isinstance(cls, type) or not issubclass(cls, enum.Enum) or type(member) is not str:
        raise NotPlain(f"not one of the tool's enumerations: {name!r}")
    try:
        return cls[member]
    except KeyError:
        raise NotPlain(f"{name} has no member {member!r}") from None


def _sentinel(name) -> object:
    if name == "values:OTHER":
        from ..core.values import OTHER

        return OTHER
    raise NotPlain(f"not a sentinel: {name!r}")


def from_plain(data):
    if type(data) is not dict or data.keys() != {"classes", "objects", "root"}:
        raise NotPlain("not a plain document")
    classes, objects = data["classes"], data["objects"]
    if type(classes) is not list or type(objects) is not list:
        raise NotPlain("not a plain document")
    classes = [_class(name) for name in classes]
    built: list = []
    for entry in objects:
        built.append(_object(entry, classes, built))
    return _value(data["root"], built)


def _object(entry, classes: list, built: list):
    if type(entry) is not list or not entry or type(entry[0]) is not int or not 0 <= entry[0] < len(classes):
        raise NotPlain("an object entry that is not a class and its fields")
    cls, names, has_dict = classes[entry[0]]
    if len(entry) != len(names) + 1:
        raise NotPlain(f"{cls.__qualname__}: other fields than the class has")
    values = [v if type(v) in _ATOM_TYPES else _value(v, built) for v in entry[1:]]
    obj = object.__new__(cls)
    if has_dict:
        obj.__dict__.update(zip(names, values))
    else:
        for name, value in zip(names, values):
            object.__setattr__(obj, name, value)
    return obj


def _value(data, built: list):
    t = type(data)
    if t in _ATOM_TYPES:
        return data
    if t is list:
        return [x if type(x) in _ATOM_TYPES else _value(x, built) for x in data]
    if t is dict and len(data) == 2 and "e" in data:
        return _member(data.get("e"), data.get("n"))
    if t is not dict or len(data) != 1:
        raise NotPlain("not a plain value")
    ((tag, body),) = data.items()
    if tag == "r":
        if type(body) is not int or not 0 <= body < len(built):
            raise NotPlain("a reference to no earlier object")
        return built[body]
    if tag == "m" and type(body) is dict:
        return {k: v if type(v) in _ATOM_TYPES else _value(v, built) for k, v in body.items()}
    if tag == "o":
        return _sentinel(body)
    if type(body) is not list:
        raise NotPlain(f"tag {tag!r} without a list")
    try:
        if tag == "t":
            return tuple([x if type(x) in _ATOM_TYPES else _value(x, built) for x in body])
        if tag == "s":
            return {_value(x, built) for x in body}
        if tag == "f":
            return frozenset(_value(x, built) for x in body)
        if tag == "d":
            return {_value(k, built): _value(v, built) for k, v in (_pair(p) for p in body)}
    except TypeError as err:  # an unhashable value where a key or set member was
        raise NotPlain(str(err)) from None
    raise NotPlain(f"unknown tag {tag!r}")


def _pair(p):
    if type(p) is not list or len(p) != 2:
        raise NotPlain("a dict entry that is not a pair")
    return p
