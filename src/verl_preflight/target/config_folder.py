"""The config folders a launch's Hydra will search: the *config* part of its target.

Hydra (hydra-core 1.3) reads the root config from the entry point's own
`@hydra.main(config_path=...)` folder, relative to the entry module's file; a
`--config-path` replaces it, absolute or relative to that same file
(hydra/_internal/utils.py:321-322 `config_path = args.config_path`). It then adds
`--config-dir` (relative to the working directory) and the entries of
`hydra.searchpath`, from the root config or, replacing those, from the command
line (config_loader_impl.py:152-215): `file://P` relative to the working
directory, `pkg://a.b` the folder of an importable package.

The working directory is where the launch starts. verl's scripts say to run from
the project's root (`PROJECT_DIR="$(pwd)"`): the folder holding the verl package
the launch runs, else the script's repository (a folder with .git). A path built on
`$(pwd)` is resolved there, and the report says so. A folder that is not here (a
package not installed, a checkout the corpus lacks) leaves the launch "not checked
past this point", said as a note, never a missing-config error.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

from ..core.repository import root_of
from ..core.values import shown_path
from ..hydra_stage.tree import Tree, entry_config_name, module_dir
from ..store.session import memo

_PWD = ("$(pwd)", "$PWD", "${PWD}", "`pwd`")


@dataclass(frozen=True)
class ConfigSearch:
    """Where Hydra reads the launch's root config and groups from, and whether that is here."""

    tree: Tree | None  # the folders, primary first; None: not known here
    how: str  # how the primary folder was decided, said to the user
    missing: str | None = None  # why the launch is not checked past its root config (None: it is)
    assumed: str | None = None  # what was assumed to find it (the working directory)
    own: bool = True  # verl's own config folder, as the entry point declares it

    @property
    def checkable(self) -> bool:
        return self.tree is not None and self.missing is None

    def describe(self) -> str:
        """Empty for verl's own folder (the usual case needs no word) and for a module with no config."""
        if self.own and self.checkable or self.tree is None and self.missing is None:
            return ""
        if not self.checkable:
            return f"config not checked: {self.missing}"
        if self.assumed:  # the folder is in `how` already (`--config-path=$(pwd)/conf`)
            return f"config {self.how}, {self.assumed}"
        return f"config {shown_path(self.tree.primary)} ({self.how})"

    def as_json(self) -> dict:
        return {
            "folders": list(self.tree.dirs) if self.tree is not None else [],
            "how": self.how,
            "checked": self.checkable,
            "missing": self.missing,
            "assumed": self.assumed,
        }


def project_root(script_path: str, source) -> str | None:
    """The folder the launch is taken to start in: the one holding the verl package it runs,
    when the script is inside it; else the script's repository root (repository.root_of: the
    nearest folder above it with .git, pyproject.toml, setup.py or setup.cfg); else None."""
    if script_path == "-":
        return None
    here = os.path.abspath(script_path)
    if source is not None and source.package_root:
        holder = os.path.dirname(os.path.abspath(source.package_root))
        if here.startswith(holder + os.sep):
            return holder
    return root_of(script_path)


def search_of(spec, source, root: str | None, config_name: str | None) -> ConfigSearch:
    """The config folders of one launch (module docstring)."""
    if source is None:
        return ConfigSearch(None, "no verl config tree", "no verl config tree")
    if source.missing:  # the project's verl is not here: nothing is checked against another
        return ConfigSearch(None, source.origin, source.missing, own=False)
    if config_name is None:  # no Hydra entry point: the module reads its own arguments
        return ConfigSearch(None, "no Hydra config")
    app = getattr(spec, "app", None)
    if app is not None:  # a Hydra app of the project's: its @hydra.main, relative to its own file
        entry_dir, declared = os.path.dirname(app.file), app.config_path
    else:
        entry_dir, declared = module_dir(source, spec.module), entry_config_name(source, spec.module)[0]
    assumed = None
    if spec.config_path_loc is None:
        if app is None and declared in ("config", "./config", "config/") and entry_dir is None:
            primary, how, own = source.path, "verl's own config folder", True  # no sources: the table's entry
        elif entry_dir is None:
            missing = f"{spec.module} has no source here"
            return ConfigSearch(None, missing, missing, own=False)
        else:
            primary, how, assumed = _resolve(declared, entry_dir, root, "@hydra.main(config_path)")
            own = primary is not None and os.path.normpath(primary) == os.path.normpath(source.path)
            how = "verl's own config folder" if own else f"the entry point's config_path={declared}"
            if app is not None and primary is None and declared is None:
                how = f"{spec.module}'s @hydra.main names no config_path"
    else:
        field = spec.config_path_field
        primary, how, assumed = _resolve_field(field, entry_dir, root)
        own = primary is not None and os.path.normpath(primary) == os.path.normpath(source.path)
        how = "verl's own config folder" if own else how
    if primary is None:
        return ConfigSearch(None, how, how, assumed, own=False)
    if not os.path.isdir(primary):
        missing = f"{how} is not here" if assumed else f"{shown_path(primary)} is not here"
        return ConfigSearch(Tree(primary), how, missing, assumed, own)
    extra, missing, from_verl = _search_path(spec, source, root, primary, config_name)
    if from_verl:  # hydra.searchpath read from where verl's own launches start: said, it may be elsewhere
        assumed = "; ".join(a for a in (assumed, from_verl) if a)
    return ConfigSearch(Tree(primary, tuple(extra)), how, missing, assumed, own and not extra)


def _resolve(path: str | None, entry_dir: str | None, root: str | None, what: str):
    """(absolute folder or None, how, assumption) for a config path as Hydra resolves it."""
    if path is None:
        return None, f"{what} is not set", None
    if path.startswith("pkg://"):
        found = _package_dir(path[len("pkg://") :], root)
        return found, (f"{path}" if found else f"{path}: that package is not installed here"), None
    if os.path.isabs(path):
        return os.path.normpath(path), path, None
    if entry_dir is None:
        return None, f"{path}, relative to the entry module, whose source is not here", None
    return os.path.normpath(os.path.join(entry_dir, path)), f"--config-path={path}", None


def _resolve_field(field, entry_dir: str | None, root: str | None):
    """--config-path as the script wrote it: known text, or `$(pwd)` / `$PWD` then known text."""
    if field is None:
        return None, "--config-path without a value", None
    if field.known:
        primary, how, _ = _resolve(field.value, entry_dir, root, "--config-path")
        return primary, how if how.startswith("--config-path") else f"--config-path={field.value}", None
    pieces = field.pieces
    first = pieces[0]
    rest = pieces[1:]
    if not isinstance(first, str) and first.source in _PWD and all(isinstance(p, str) for p in rest):
        tail = "".join(rest)
        shown = f"--config-path={first.source}{tail}"
        if root is None:
            return None, f"{shown}: the folder the launch starts in is not known", None
        return os.path.normpath(root + tail), shown, f"run from {shown_path(root)}"
    return None, f"--config-path={field.display} is known only at run time", None


def _package_parts(dotted: str) -> list[str]:
    """`a.b.c` or `a/b/c` (Hydra's pkg:// takes either) as its parts."""
    return [p for p in dotted.replace("/", ".").split(".") if p]


def _package_dir(dotted: str, root: str | None = None) -> str | None:
    """The folder of a package's sub-path (`a.b.c`, `a/b/c`): one of the project's, under the
    folder the launch starts in (`root`, first on sys.path there), else an importable one,
    found without importing it."""
    parts = _package_parts(dotted)
    if not parts:
        return None
    if root is not None and os.path.isfile(os.path.join(root, parts[0], "__init__.py")):
        path = os.path.join(root, *parts)
        return path if os.path.isdir(path) else None
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], *parts[1:])
    return path if os.path.isdir(path) else None


def _search_path(spec, source, root: str | None, primary: str, config_name: str | None):
    """(the folders after the primary one, why one is missing or None, what was assumed or None):
    --config-dir, then hydra.searchpath from the command line, else from the root config."""
    extra: list[str] = []
    assumed = None
    for value, field, _loc in spec.config_dirs:
        if value is None:
            return extra, f"--config-dir={field.display if field else '?'} is known only at run time", None
        folder = value if os.path.isabs(value) else (os.path.join(root, value) if root else None)
        if folder is None:
            return extra, f"--config-dir={value}: the folder the launch starts in is not known", None
        extra.append(os.path.normpath(folder))
    entries = _searchpath_override(spec)
    if entries is _AT_RUN_TIME:
        return extra, "hydra.searchpath given on the command line is known only at run time", None
    if entries is None and config_name:
        entries = _searchpath_in(primary, config_name)
    for entry in entries or ():
        if entry.startswith("pkg://"):
            parts = _package_parts(entry[len("pkg://") :])
            top = parts[0] if parts else ""
            if source.package_root and top == os.path.basename(source.package_root):
                folder = os.path.join(source.package_root, *parts[1:])
            else:
                folder = _package_dir(entry[len("pkg://") :], root)
            if folder is None:
                return extra, f"hydra.searchpath {entry}: the package {top} is not installed here", None
        else:
            path = entry[len("file://") :] if entry.startswith("file://") else entry
            folder = path if os.path.isabs(path) else _relative_folder(path, root, source)
            if folder is None:
                return extra, f"hydra.searchpath {entry}: the folder the launch starts in is not known", None
            if root is None or not os.path.isdir(os.path.join(root, path)):
                assumed = f"run from the folder holding verl ({entry} is relative to where the launch starts)"
        if not os.path.isdir(folder):
            return extra, f"hydra.searchpath {entry}: {shown_path(folder)} is not here", None
        extra.append(os.path.normpath(folder))
    return extra, None, assumed


def _relative_folder(path: str, root: str | None, source) -> str | None:
    """A relative `file://` search path: from the folder the launch starts in; where it is not
    there, from the folder holding the verl package the launch runs (verl's own root configs
    name `file://verl/trainer/config`, meant for a launch from a checkout of verl)."""
    holder = os.path.dirname(os.path.abspath(source.package_root)) if source.package_root else None
    for base in (root, holder):
        if base is not None and os.path.isdir(os.path.join(base, path)):
            return os.path.join(base, path)
    return os.path.join(root, path) if root is not None else None


_AT_RUN_TIME = object()  # (a searchpath override whose value only the run knows: spec_diag's file://$VERL_HYDRA_CONFIG_DIR)


def _searchpath_override(spec):
    """`hydra.searchpath=[a,b]` on the command line (it replaces the root config's), else None;
    _AT_RUN_TIME where its value is known only at run time."""
    for o in reversed(spec.overrides):
        text = o.display
        if text.startswith("hydra.searchpath=") and not o.known:
            return _AT_RUN_TIME
        if text.startswith("hydra.searchpath=") and o.known:
            value = text.split("=", 1)[1].strip()
            if value.startswith("[") and value.endswith("]"):
                return [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
    return None


@memo(limit=256)
def _searchpath_in(primary: str, config_name: str) -> tuple[str, ...]:
    """The `hydra: searchpath:` list of the root config file (read as YAML, nothing composed;
    once a run: every launch of every profile asks)."""
    name = config_name if config_name.endswith(".yaml") else config_name + ".yaml"
    from ..core.bounded_read import read_bounded

    data = read_bounded(os.path.join(primary, name))
    try:
        text = data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        text = None
    if text is None:
        return ()
    if "searchpath" not in text:  # verl's own root configs: no need to import PyYAML and parse a thousand lines
        return ()
    import yaml

    from ..core.yaml_read import load

    try:
        data = load(text)
    except yaml.YAMLError:
        return ()
    entries = ((data or {}).get("hydra") or {}).get("searchpath") if isinstance(data, dict) else None
    return tuple(e for e in entries if isinstance(e, str)) if isinstance(entries, list) else ()
