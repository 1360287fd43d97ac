"""Megatron-Core's TransformerConfig fields, per megatron-core version.

`TransformerConfig` (megatron/core/transformer/transformer_config.py) is a
dataclass that subclasses `ModelParallelConfig`
(megatron/core/model_parallel_config.py); its fields, inherited ones included,
are the keys `override_transformer_config` can carry to Megatron-Core.
`MLATransformerConfig` (same file) adds the multi-latent-attention fields.

Fields come from the installed megatron-core source when its version is the
one asked for (read with `ast`: importing megatron pulls torch), else from
the data shipped in `verl_preflight/data/stack/megatron-core-<version>.json`,
which tools/gen_stack_data.py writes from Megatron-LM's tagged sources.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
from functools import lru_cache
from importlib import resources

from ..store.derived import kept_reading
from ..store.session import memo
from ._pyast import base_names, is_dataclass_class, own_fields, parse_file

# The files that define the classes, relative to the directory holding `megatron/`.
SOURCE_FILES = (
    ("megatron", "core", "model_parallel_config.py"),
    ("megatron", "core", "transformer", "transformer_config.py"),
)
CLASSES = ("ModelParallelConfig", "TransformerConfig", "MLATransformerConfig")
_DATA_PREFIX = "megatron-core-"


def normalize_version(version: str) -> str:
    """`core_v0.18.0`, `v0.18.0` and `0.18.0` all name megatron-core 0.18.0."""
    version = version.strip()
    for prefix in ("core_v", "core_r", "v"):
        if version.startswith(prefix):
            return version[len(prefix) :]
    return version


def extract_classes(tree_root: str) -> dict[str, dict] | None:
    """{class: {"bases": [...], "fields": {field: annotation}}} for CLASSES, read from a
    source tree that holds `megatron/core/...` (a Megatron-LM checkout or site-packages).

    None when the tree has no TransformerConfig.
    """
    classes: dict[str, dict] = {}
    for parts in SOURCE_FILES:
        tree = parse_file(os.path.join(tree_root, *parts))
        if tree is None:
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name in CLASSES and is_dataclass_class(node):
                classes[node.name] = {
                    "bases": [b.rsplit(".", 1)[-1] for b in base_names(node)],
                    "fields": own_fields(node),
                }
    if "TransformerConfig" not in classes:
        return None
    return {name: classes[name] for name in CLASSES if name in classes}


def _flatten(classes: dict[str, dict], name: str) -> dict[str, str] | None:
    """Fields of `name` with those of its bases (a subclass's annotation wins)."""
    if name not in classes:
        return None
    out: dict[str, str] = {}
    order, todo, seen = [], [name], set()
    while todo:
        current = todo.pop(0)
        if current in seen or current not in classes:
            continue
        seen.add(current)
        order.append(current)
        todo.extend(classes[current]["bases"])
    for current in reversed(order):
        out.update(classes[current]["fields"])
    return out


def installed_megatron_version() -> str | None:
    """The installed megatron-core's version, read from the source it ships
    (megatron/core/package_info.py) or else from its distribution metadata;
    megatron is never imported."""
    root = _installed_tree()
    if root:
        version = _package_info_version(os.path.join(root, "megatron", "core", "package_info.py"))
        if version:
            return version
    from importlib import metadata  # imported here: a run that needs no version never pays for it

    try:
        return metadata.version("megatron-core")
    except metadata.PackageNotFoundError:
        return None


def _package_info_version(path: str) -> str | None:
    """MAJOR.MINOR.PATCH+PRE_RELEASE from the assignments in package_info.py."""
    tree = parse_file(path)
    if tree is None:
        return None
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant):
                values[node.targets[0].id] = node.value.value
    if not all(k in values for k in ("MAJOR", "MINOR", "PATCH")):
        return None
    return f"{values['MAJOR']}.{values['MINOR']}.{values['PATCH']}{values.get('PRE_RELEASE') or ''}"


def _installed_tree() -> str | None:
    """The directory that holds the installed `megatron/` package."""
    try:
        spec = importlib.util.find_spec("megatron")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        parent = os.path.dirname(os.path.abspath(location))
        if os.path.isfile(os.path.join(parent, *SOURCE_FILES[1])):
            return parent
    return None


def installed_tree_of(version: str) -> str | None:
    """The directory holding the installed `megatron/` package when it is megatron-core `version`."""
    root = _installed_tree()
    return root if root and installed_megatron_version() == normalize_version(version) else None


@memo(limit=16)
def megatron_file(version: str, parts: tuple) -> ast.Module | None:
    """A source file of megatron-core `version` (parts: ("megatron", "core", ...)), read with `ast`:
    the installed package's when it is that version, else the release's wheel in
    $VERL_PREFLIGHT_WHEELS/megatron-core (the wheels `make setup` downloads); None when neither is here."""
    root = installed_tree_of(version)
    if root is not None:
        return parse_file(os.path.join(root, *parts))
    wanted = normalize_version(version)
    folder = os.path.join(os.environ.get("VERL_PREFLIGHT_WHEELS") or "", "megatron-core")
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    wheel = next((n for n in names if n.startswith(f"megatron_core-{wanted}-") and n.endswith(".whl")), None)
    if wheel is None:
        return None
    import zipfile  # (only where megatron-core's wheels are read)

    try:
        with zipfile.ZipFile(os.path.join(folder, wheel)) as zf:
            return ast.parse(zf.read("/".join(parts)).decode("utf-8"))
    except (OSError, KeyError, SyntaxError, ValueError, zipfile.BadZipFile):
        return None


def _version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.+-]", version))


@lru_cache(maxsize=1)
def known_megatron_versions() -> tuple[str, ...]:
    """The megatron-core versions whose fields ship with the package, oldest first."""
    out = []
    for entry in resources.files("verl_preflight.data").joinpath("stack").iterdir():
        name = entry.name
        if name.startswith(_DATA_PREFIX) and name.endswith(".json"):
            out.append(name[len(_DATA_PREFIX) : -len(".json")])
    return tuple(sorted(out, key=_version_key))


@lru_cache(maxsize=16)
def _shipped(version: str) -> dict | None:
    entry = resources.files("verl_preflight.data").joinpath("stack", f"{_DATA_PREFIX}{version}.json")
    try:
        return json.loads(entry.read_text(encoding="utf-8"))
    except (FileNotFoundError, OSError):
        return None


@memo(limit=4)
def _installed_classes(version: str) -> dict[str, dict] | None:
    root = _installed_tree()
    return _classes_in(root) if root else None


@kept_reading(lambda root: tuple(os.path.join(root, *parts) for parts in SOURCE_FILES))  # once per machine
def _classes_in(root: str) -> dict[str, dict] | None:
    return extract_classes(root)


def megatron_classes(version: str | None = None) -> tuple[str, dict[str, dict]] | None:
    """(version, classes) for a megatron-core version; None when nothing is known about it.

    `version=None` means the installed megatron-core. The installed source is
    read when its version matches; otherwise the shipped data answers.
    """
    installed = installed_megatron_version()
    wanted = normalize_version(version) if version else installed
    if wanted is None:
        return None
    if installed is not None and wanted == installed:
        classes = _installed_classes(installed)
        if classes is not None:
            return wanted, classes
    data = _shipped(wanted)
    if data is None:
        return None
    return wanted, data["classes"]


def transformer_config_types(version: str | None = None, cls: str = "TransformerConfig") -> dict[str, str] | None:
    """{field: annotation text} of `cls` with inherited fields; None without data for that version."""
    found = megatron_classes(version)
    if found is None:
        return None
    return _flatten(found[1], cls)


def transformer_config_fields(version: str | None = None, cls: str = "TransformerConfig") -> frozenset[str] | None:
    """Field names of `cls` (TransformerConfig by default) with inherited ones; None without data."""
    types = transformer_config_types(version, cls)
    return None if types is None else frozenset(types)
