"""Attributes, calls and classes as the evaluator follows them: an object's fields and methods,
verl's classes and their MRO, the calls the caller gives or lets it follow, and the dataclasses
verl builds from a config section."""

from __future__ import annotations

import ast

from .._pyast import dotted
from .model import (
    _ABSENT,
    _BUILTINS,
    _GETATTR,
    _OUTSIDE_BASES,
    _SILENT,
    _STR_METHODS,
    UNKNOWN,
    Node,
    Obj,
    V,
    _as_field_type,
    _Class,
    _defines,
    _Function,
    _is_static,
    _is_super_call,
    _Method,
    _plain_value,
    _range_fits,
)


class Objects:
    """Attributes, calls and classes for `Evaluator` (a part of it)."""

    # ---- attributes and objects ------------------------------------------------------

    def attribute(self, owner, attr: str):
        if owner is UNKNOWN:
            return UNKNOWN
        if isinstance(owner, Node):
            if attr in ("get", "keys", "values", "items"):
                return _Method(owner, attr)
            return self.child(owner, attr)
        if isinstance(owner, Obj):
            return self.obj_attribute(owner, attr)
        if isinstance(owner, _Class):
            return self.class_attribute(owner, attr)
        if isinstance(owner, dict) and attr in ("get", "keys", "values", "items"):
            return _Method(owner, attr)
        if isinstance(owner, str) and attr in _STR_METHODS:
            return _Method(owner, attr)
        return UNKNOWN

    def obj_attribute(self, owner: Obj, attr: str):
        if attr in owner.fields:
            return self.field(owner, attr)
        if attr == "get" and owner.path is not None:
            return _Method(owner, "get")
        method = self.method_of(owner, attr)
        if method is None:
            return UNKNOWN
        fn, where, cls = method
        owned = (cls, where) if cls is not None else None
        if _is_static(fn):
            return _Function(fn, where, owner=owned)
        return _Function(fn, where, bound=owner, owner=owned)

    def class_attribute(self, owner: _Class, attr: str):
        for stmt in owner.node.body:  # an enum member or a class constant
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
                return self.expr(stmt.value, {}, owner.module)
            if isinstance(stmt, ast.FunctionDef) and stmt.name == attr and _is_static(stmt):
                return _Function(stmt, owner.module, owner=(owner.node, owner.module))
        return UNKNOWN

    def field(self, owner: Obj, attr: str):
        """An attribute of an object, with the config keys its value comes from."""
        taint = owner.taint.get(attr, ())
        if any(self.poisoned_at(k) for k in taint):
            return UNKNOWN
        self.reads.extend(taint)
        return owner.fields[attr]

    def method_of(self, owner: Obj, name: str):
        """(FunctionDef, module, defining class or None) of an object's method, or None."""
        if name in owner.methods:
            return owner.methods[name], owner.module, None
        return self.method(owner.cls, owner.module, name) if owner.cls is not None else None

    def method(self, cls: ast.ClassDef, module: str, name: str):
        """(FunctionDef, module, defining class) of `name` in the class or its bases (in the sources)."""
        for klass, where in self.mro(cls, module):
            for stmt in klass.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                    return stmt, where, klass
        return None

    def mro(self, cls: ast.ClassDef, module: str, seen: set | None = None):
        """The class and its bases in the sources, depth first."""
        seen = set() if seen is None else seen
        if (module, cls.name) in seen:
            return
        seen.add((module, cls.name))
        yield cls, module
        for base in cls.bases:
            found = self.resolve_dotted(module, ast.unparse(base))
            if found is not None and isinstance(found[2], ast.ClassDef):
                yield from self.mro(found[2], found[0], seen)

    def resolve_dotted(self, module: str, ref: str):
        return self.sources._resolve_dotted(module, ref) if self.sources is not None else None

    def class_binds(self, cls: ast.ClassDef, module: str, name: str) -> bool:
        """Whether the class or a base (in the sources, or any base outside them) defines `name`."""
        for klass, where in self.mro(cls, module):
            if _defines(klass, name):
                return True
            for base in klass.bases:
                ref = ast.unparse(base)
                found = self.resolve_dotted(where, ref)
                if found is not None and isinstance(found[2], ast.ClassDef):
                    continue
                known = _OUTSIDE_BASES.get(ref)
                if known is None or hasattr(known, name):
                    return True  # a base from outside the sources that may define it
        return False

    def has_no(self, owner: Obj, name: str) -> bool:
        """Whether the object surely has no attribute `name`: it is complete and neither it nor
        its class binds it."""
        if not owner.complete:
            return False
        return owner.cls is None or not self.class_binds(owner.cls, owner.module, name)

    # ---- calls ---------------------------------------------------------------------

    def call_expr(self, node: ast.Call, scope: dict, module: str):
        func_node = node.func
        given = self.calls.get(dotted(func_node)) if self.calls else None  # (the keys are dotted names)
        if given is not None:
            return self.given_call(given, node, scope, module)
        if isinstance(func_node, ast.Attribute) and func_node.attr in _SILENT:
            return None  # logger.warning, warnings.warn, print-like: nothing to check
        if _is_super_call(func_node):
            return self.super_call(node, scope, module)
        func = self.expr(func_node, scope, module)
        args, taints, kwargs, kwtaints = self.arguments(node, scope, module)
        if node in self.capture:
            self.captured[node] = {k: V(v, tuple(dict.fromkeys(kwtaints[k]))) for k, v in kwargs.items()}
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return UNKNOWN
        return self.apply(func, args, taints, kwargs, kwtaints)

    def arguments(self, node: ast.Call, scope: dict, module: str):
        """(args, their keys, kwargs, their keys) of a call, evaluated in order."""
        args, taints, kwargs, kwtaints = [], [], {}, {}
        for a in node.args:
            start = len(self.reads)
            args.append(UNKNOWN if isinstance(a, ast.Starred) else self.expr(a, scope, module))
            taints.append(tuple(self.reads[start:]))
        for k in node.keywords:
            start = len(self.reads)
            value = self.expr(k.value, scope, module)
            if k.arg is not None:
                kwargs[k.arg], kwtaints[k.arg] = value, tuple(self.reads[start:])
        return args, taints, kwargs, kwtaints

    def given_call(self, given, node: ast.Call, scope: dict, module: str):
        """A call whose value the caller gives: a value, or its function of the arguments."""
        if not callable(given):
            return given
        args, taints, kwargs, kwtaints = self.arguments(node, scope, module)
        result = given(
            self,
            [V(a, t) for a, t in zip(args, taints, strict=True)],
            {k: V(v, kwtaints[k]) for k, v in kwargs.items()},
        )
        self.reads.extend(result.keys)
        return result.value

    def apply(self, func, args: list, taints: list, kwargs: dict, kwtaints: dict):
        if isinstance(func, _Function):
            if func.node.name == "omega_conf_to_dataclass":
                target = kwargs.get("dataclass_type", args[1] if len(args) > 1 else None)
                return self.build(args[0] if args else UNKNOWN, target)
            return self.invoke(func, args, kwargs, taints, kwtaints)
        if isinstance(func, _Method):
            return func.call(args, self)
        if func in _GETATTR:
            return self.getattr_call(func, args)
        if func is print:
            return None
        if callable(func) and any(func is b for b in _BUILTINS.values()):
            if func is range and not _range_fits(args):
                return UNKNOWN
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
        if isinstance(owner, Obj):
            return self.getattr_obj(func, owner, name, args)
        if isinstance(owner, Node):
            value = self.child(owner, name, default=_ABSENT, strict=False)
            if func is hasattr:
                return UNKNOWN if value is UNKNOWN else value is not _ABSENT
            if value is _ABSENT:
                return args[2] if len(args) > 2 else UNKNOWN
            return value
        if owner is None and func is getattr and len(args) > 2:
            return args[2]
        return UNKNOWN

    def getattr_obj(self, func, owner: Obj, name: str, args: list):
        if name in owner.fields:
            return True if func is hasattr else self.field(owner, name)
        if not self.has_no(owner, name):
            return UNKNOWN  # the trainer, or a method / class attribute: not followed
        if func is hasattr:
            return False  # a built dataclass has its fields and what its classes define
        return args[2] if len(args) > 2 else UNKNOWN

    def super_call(self, node: ast.Call, scope: dict, module: str):
        """`super().method(args)` in a method: the next definition after the defining class."""
        this, owner = scope.get("self"), scope.get("__class__")
        if not isinstance(this, Obj) or not isinstance(owner, tuple):
            return UNKNOWN
        cls, where = owner
        args = [self.expr(a, scope, module) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, scope, module) for k in node.keywords if k.arg}
        for base, base_module in list(self.mro(cls, where))[1:]:
            hit = self.method(base, base_module, node.func.attr)
            if hit is not None:
                fn, fn_module, fn_cls = hit
                return self.invoke(_Function(fn, fn_module, bound=this, owner=(fn_cls, fn_module)), args, kwargs)
        return None if node.func.attr == "__post_init__" else UNKNOWN

    # ---- dataclasses built from the config -------------------------------------------------

    def build(self, node, dataclass_type):
        """omega_conf_to_dataclass(node): the dataclass its `_target_` (or `dataclass_type`)
        names, fields from the node (converted to the field's type as OmegaConf does), the rest
        from the class's defaults; its __post_init__ runs."""
        if not isinstance(node, Node):
            return UNKNOWN
        found = self.dataclass_of(node, dataclass_type)
        if found is None:
            return UNKNOWN
        cls, where = found
        obj = Obj(cls=cls, module=where, path=node.path)
        for name, annotation in (self.sources.field_types(f"{where}.{cls.name}") or {}).items():
            obj.set(name, *self.field_value(node, cls, where, name, annotation))
        del self.reads[self.statement :]  # building reads every field; a check reads what it uses
        self.built.add(node.path)
        post = self.method(cls, where, "__post_init__")
        if post is not None:
            fn, fn_module, fn_cls = post
            self.invoke(_Function(fn, fn_module, bound=obj, owner=(fn_cls, fn_module)), [], {})
        return obj

    def dataclass_of(self, node: Node, dataclass_type):
        """(ClassDef, module) of the dataclass a section is built into, or None."""
        if isinstance(dataclass_type, _Class):
            return dataclass_type.node, dataclass_type.module
        if dataclass_type is not None or self.sources is None:
            return None
        target = self.view.raw(f"{node.path}._target_")
        setting = self.view.setting(f"{node.path}._target_")
        if setting is not None:
            target = setting.value if isinstance(setting.value, str) else None
        if not isinstance(target, str) or not target.startswith("verl."):
            return None
        module, _, name = target.rpartition(".")
        found = self.lookup(module, name)
        if found is None or not isinstance(found[2], ast.ClassDef):
            return None
        return found[2], found[0]

    def field_value(self, node: Node, cls: ast.ClassDef, where: str, name: str, annotation: str):
        """(value, keys) of a dataclass field built from the section: the section's, or the default."""
        start = len(self.reads)
        present = self.child(node, name, default=_ABSENT, strict=False)
        taint = tuple(self.reads[start:]) or (f"{node.path}.{name}",)
        if present is _ABSENT:
            return self.default(cls, where, name), taint
        return _as_field_type(present, annotation), taint

    def default(self, cls: ast.ClassDef, module: str, name: str):
        for klass, _where in self.mro(cls, module):
            for stmt in klass.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
                    return stmt.value.value if isinstance(stmt.value, ast.Constant) else UNKNOWN
        return UNKNOWN
