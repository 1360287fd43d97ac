"""Find verl's config tree, compose it with Hydra once per group selection, cache it.

Where the tree is (`--verl-config DIR`, `VERL_CONFIG_DIR`, the installed verl) is found
by config_location.py, light to import; this module builds the ConfigSource. A composition is turned into a plain JSON
snapshot that the fast check in hydra_stage/check.py reads; snapshots and parsed
overrides are cached across runs in a file keyed by the tree's content hash.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
import re
import stat
import warnings
from collections import defaultdict
from dataclasses import dataclass

from ..core.config_location import TREE_DEPENDENCY, entry_root, found, tree_hash
from ..core.repository import Repositories, root_of
from ..store import queries
from ..store.dependencies import hydra_versions, read_source
from ..store.session import memo


@dataclass
class ConfigSource:
    """A verl config tree and the verl it belongs to: the *verl* part of a launch's target."""

    path: str
    verl_version: str | None
    package_root: str | None = None  # the verl package dir, to read entry points
    origin: str = "installed"  # how it was found: installed, --verl-config, --verl 0.8.0, vendored ...
    missing: str | None = None  # the project's verl is not at hand here: why (its launches are not checked)

    def describe(self) -> str:
        if self.verl_version is None and self.missing:  # (not at hand: `how` says which verl it is)
            return f"verl ({self.origin})"
        return f"verl {self.verl_version or '(version not known)'} ({self.origin})"

    def as_json(self) -> dict:
        out = {"version": self.verl_version, "origin": self.origin, "config": self.path}
        if self.missing:
            out["missing"] = self.missing
        return out

    @property
    def entry_points(self) -> str:
        """Where the entry points (module -> root config) come from (entry_origin)."""
        return entry_origin(self)


def locate(explicit: str | None) -> ConfigSource:
    """The tree of `--verl-config DIR`, else `VERL_CONFIG_DIR`, else the installed verl's."""
    return ConfigSource(*found(explicit))


def project_folders(script_path: str):
    """The script's folder and those above it, up to its repository's root (repository.root_of;
    with none, up to the file system's root, 32 at most): the folders a script with no `cd` may
    be run from, where `python3 -m` finds the project's packages first."""
    root = root_of(script_path)
    cur = os.path.dirname(os.path.abspath(script_path))
    for _ in range(32):
        yield cur
        parent = os.path.dirname(cur)
        if parent == cur or cur == root:
            return
        cur = parent


def _verls_own(module: str, root: str, folders: tuple) -> bool:
    """A module of verl's (`verl.trainer.main_ppo`, a recipe beside verl's package, a verl vendored
    under another package: `myproj.verl.trainer.main_ppo` where myproj/verl is a verl package), not
    one of the project's own (a recipe of verl's recipe repository; `skyrl_agent.integrations.verl.
    verl_main_ppo`, whose `verl` is a subpackage of the project's, no verl)."""
    inner = in_verl(module)
    if inner is None or _of_recipe_tree(module, root, folders):
        return False
    if inner == module:
        return True
    prefix = module[: -len(inner)].rstrip(".").split(".")
    return any(os.path.isdir(os.path.join(f, *prefix, "verl", "trainer")) for f in (*folders, root))


def _of_recipe_tree(module: str, root: str, folders: tuple) -> bool:
    """`recipe.X.Y` launched where no `recipe/` folder is (a repository that is verl's recipe
    tree, meant to sit at verl/recipe: repository.module_file finds its own X/Y.py)."""
    return module.startswith("recipe.") and not any(os.path.isdir(os.path.join(f, "recipe")) for f in (*folders, root))


def _app_of(repo, script_path: str, module: str, folders: tuple = ()) -> tuple:
    from ..sources.hydra_app import hydra_app

    if module.endswith(".py"):
        path = repo.script_file(module, os.path.dirname(os.path.abspath(script_path)))
    else:
        path = repo.module_file(module, folders)
    if path is None:
        return None, None
    return path, hydra_app(path, repo.text, repo.module_file)  # (read and kept by the repository: repository.py)


def project_holds(script_path: str, package: str) -> bool:
    """Whether the script's project (`project_folders`) holds a top-level package folder."""
    return script_path != "-" and any(os.path.isdir(os.path.join(d, package)) for d in project_folders(script_path))


@dataclass(frozen=True)
class Tree:
    """The folders Hydra searches for one launch: the root config's folder, then the others
    (`hydra.searchpath`, `--config-dir`), absolute paths, in Hydra's order."""

    primary: str
    extra: tuple = ()

    @property
    def dirs(self) -> tuple:
        return (self.primary, *self.extra)

    def find(self, *parts: str) -> str | None:
        """The first folder's path to `parts` (a config file or a group folder) that exists."""
        for d in self.dirs:
            p = os.path.join(d, *parts)
            if os.path.exists(p):
                return p
        return None


# verl's Hydra entry points, module -> (config_path, config_name), as their @hydra.main
# decorators say in verl 0.8.0 and 0.9.1. Used only when no verl sources of the checked
# tree can be read (`--verl-config DIR` holding the config tree alone).
ENTRY_POINTS = {
    "verl.trainer.main_ppo": ("config", "ppo_trainer"),
    "verl.trainer.main_ppo_sync": ("config", "ppo_trainer"),  # 0.8.0
    "verl.trainer.main_generation_server": ("config", "ppo_trainer"),
    "verl.trainer.main_eval": ("config", "evaluation"),
    "verl.trainer.sft_trainer": ("config", "sft_trainer_engine"),
    "verl.trainer.sft_trainer_ray": ("config", "sft_trainer_engine"),
    "verl.experimental.fully_async_policy.fully_async_main": ("config", "fully_async_ppo_trainer"),
    "verl.experimental.one_step_off_policy.main_ppo": ("config", "one_step_off_ppo_trainer"),
    # older releases (verl v0.4.1 and v0.7.0: trainer/main_generation.py, trainer/fsdp_sft_trainer.py)
    "verl.trainer.main_generation": ("config", "generation"),
    "verl.trainer.fsdp_sft_trainer": ("config", "sft_trainer"),
}
_MODULE = re.compile(r"verl(\.[A-Za-z_]\w*)+")
# a verl package under another one (`python3 -m myproj.verl.trainer.main_ppo`; a folder name
# with '-' runs too): what comes after its `verl.` is the module within verl
_VENDORED_MODULE = re.compile(r"[\w-]+(?:\.[\w-]+)*\.(verl(?:\.[A-Za-z_]\w*)+)")


# verl's recipes (`python3 -m recipe.dapo.main_dapo`): the recipe/ folder beside the verl package
_RECIPE = re.compile(r"recipe(\.[A-Za-z_]\w*)+")


def in_verl(module: str) -> str | None:
    """The module as verl's own (`verl.trainer.main_ppo`), also when it is run from a verl
    vendored under another package (`myproj.verl.trainer.main_ppo`), or one of verl's recipes
    (`recipe.dapo.main_dapo`, kept as it is); None for any other."""
    if _MODULE.fullmatch(module) or _RECIPE.fullmatch(module):
        return module
    m = _VENDORED_MODULE.fullmatch(module)
    return m.group(1) if m else None


# verl modules that `python3 -m` runs with their own argparse options, not Hydra's (their
# arguments are no overrides); verl 0.9.1 verl/model_merger/base_model_merger.py:35
# `argparse.ArgumentParser(description="verl model merger")`, the same in every verl that has it.
OWN_OPTIONS = frozenset({"verl.model_merger"})


# a module's own command line: argparse, OmegaConf.from_cli (EasyR1's verl.trainer.main), sys.argv, click, fire
_OWN_PARSERS = re.compile(r"\b(OmegaConf\.from_cli|argparse|ArgumentParser|sys\.argv|click\.command|fire\.Fire)\b")


def own_arguments(source: ConfigSource | None, module: str) -> str | None:
    """How a verl module that is no Hydra app reads its arguments itself (`argparse`,
    `OmegaConf.from_cli`, `sys.argv`: a fork's own CLI such as `verl.trainer.main config=...`),
    said with its file and line; None when it is a Hydra app, reads none, or its source is not here."""
    if in_verl(module) in OWN_OPTIONS:
        return "argparse"
    if source is None or in_verl(module) is None:
        return None
    return _own_arguments(source.path, source.package_root, source.verl_version, in_verl(module))


@memo(limit=64)
def _own_arguments(path: str, package_root: str | None, version: str | None, module: str) -> str | None:
    """own_arguments of a verl module of one tree, once a session (every launch of it asks)."""
    root = _root_for(path, package_root, version, module)
    for file in _module_files(root, module) if root else ():
        text = read_source(file, errors="replace")
        if text is None:
            continue
        if _declared_app(file) is not None:
            return None
        for number, line in enumerate(text.splitlines(), start=1):
            m = _OWN_PARSERS.search(line)
            if m:
                return f"{m.group(1)} at {os.path.basename(file)}:{number}"
        return None
    return None


def entry_origin(source: ConfigSource) -> str:
    """Where the entry points (module -> root config) come from, said to the user."""
    return entry_root(source.path, source.package_root, source.verl_version)[1]


def entry_config_name(source: ConfigSource, module: str) -> tuple[str | None, str | None]:
    """(config_path, config_name) of a verl module's @hydra.main: read from its source, else
    from the installed verl with the same tree, else (no source for it) from ENTRY_POINTS."""
    module = in_verl(module)
    if module is None:
        return None, None
    root = _root_for(source.path, source.package_root, source.verl_version, module)
    if root is None:
        return ENTRY_POINTS.get(module, (None, None))
    for c in _module_files(root, module):
        if read_source(c) is None:
            continue
        app = _declared_app(c)
        return (app.config_path, app.config_name) if app is not None else (None, None)
    return ENTRY_POINTS.get(module, (None, None))  # a partial copy of verl without this module's source


@memo(limit=64)
def _declared_app(path: str):
    """The @hydra.main a verl module declares itself (sources.hydra_app, read with `ast`: a
    decorator in a string or a comment, as a fork's argparse main_ppo keeps its old one, is
    none), or None."""
    from ..sources.hydra_app import hydra_app

    return hydra_app(path, lambda p: read_source(p, errors="replace"), follow=False)


def module_dir(source: ConfigSource, module: str) -> str | None:
    """The folder of a verl entry module's source file (what Hydra resolves a relative config
    path against); None when the sources are not at hand."""
    module = in_verl(module)
    if module is None:
        return None
    own = source.package_root
    if own and not _RECIPE.fullmatch(module):  # the launch's own verl: its folder, the module's file or not
        folder = os.path.join(own, *module.split(".")[1:-1])
        if os.path.isdir(folder):
            return folder
    root = _root_for(source.path, source.package_root, source.verl_version, module)
    if root is None:
        return None
    for c in _module_files(root, module):
        if os.path.isfile(c):
            return os.path.dirname(c)
    return None


def has_source(source: ConfigSource, module: str) -> bool:
    """Whether the verl package of `source` holds the module's file."""
    module = in_verl(module)
    root = source.package_root
    return module is not None and root is not None and any(os.path.isfile(p) for p in _module_files(root, module))


def _root_for(path: str, package_root: str | None, version: str | None, module: str) -> str | None:
    """The verl package whose sources tell of `module`: the checked verl's own package where it
    holds the module's file (a fork's module of its own: `verl.agent_trainer.main_ppo`), else the
    one entry_root chooses for its tree."""
    if package_root and any(os.path.isfile(c) for c in _module_files(package_root, module)):
        return package_root
    return entry_root(path, package_root, version)[0]


def _module_files(root: str, module: str) -> list[str]:
    """Where a module's file is: under the verl package, or (a recipe) beside it."""
    if _RECIPE.fullmatch(module):
        root, rel = os.path.dirname(root), module.split(".")
    else:
        rel = module.split(".")[1:]
    return [os.path.join(root, *rel) + ".py", os.path.join(root, *rel, "__main__.py")]


def module_exists(source: ConfigSource, module: str) -> tuple[bool | None, list[str]]:
    """(does `python3 -m module` find it: True, False, or None when no sources tell; the
    nearest modules that do exist, for "did you mean")."""
    return _module_exists(source.path, source.package_root, source.verl_version, in_verl(module) or module)


@memo(limit=64)
def _module_exists(path: str, package_root: str | None, version: str | None, module: str):
    import difflib

    if not _MODULE.fullmatch(module) and not _RECIPE.fullmatch(module):
        return None, []
    root = _root_for(path, package_root, version, module)
    if root is None:
        return (True if module in ENTRY_POINTS else None), []
    if any(os.path.isfile(c) for c in _module_files(root, module)):
        return True, []
    if _RECIPE.fullmatch(module):
        return None, []  # the recipe/ folder is not beside this verl: it cannot tell
    rel = module.split(".")[1:]
    if os.path.isdir(os.path.join(root, *rel)):
        return True, []  # a package (python3 -m then says it has no __main__, a different error)
    if not os.path.isfile(os.path.join(root, "__init__.py")):
        return None, []  # a partial copy of verl (a config tree with a few sources): it cannot tell
    # the nearest: runnable modules of the deepest package that exists on the way, and the entry points
    parent = root
    for part in rel[:-1]:
        if not os.path.isdir(os.path.join(parent, part)):
            break
        parent = os.path.join(parent, part)
    prefix = "verl." + ".".join(os.path.relpath(parent, root).split(os.sep)) if parent != root else "verl"
    # the entry points this verl really has (the table names those of every release)
    candidates = {m for m in ENTRY_POINTS if any(os.path.isfile(c) for c in _module_files(root, m))}
    try:
        names = os.listdir(parent)
    except OSError:
        names = []
    candidates |= {f"{prefix}.{n[:-3]}" for n in names if n.endswith(".py") and n != "__init__.py"}
    return False, difflib.get_close_matches(module, sorted(candidates), n=2, cutoff=0.8)


# ---- composition --------------------------------------------------------


def compose_raw(tree: Tree, config_name: str, group_overrides: list[str]):
    """Real hydra.compose with the hydra node, struct mode on, as Hydra applies overrides. The
    folders after the first are given as `hydra.searchpath`, absolute: what the launch's own
    searchpath names, resolved for the folder it runs in."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    _refuse_what_cannot_be_read(tree)
    overrides = list(group_overrides)
    if tree.extra:
        overrides.append("hydra.searchpath=[" + ",".join(f"'file://{d}'" for d in tree.extra) + "]")
    GlobalHydra.instance().clear()
    # Hydra's warnings (a defaults list without `_self_`) are its own launch's to print: a check
    # prints findings only, the same whichever process composed first
    with initialize_config_dir(config_dir=tree.primary, version_base=None), _yaml_read_once(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = compose(config_name=config_name, overrides=overrides, return_hydra_config=True)
    OmegaConf.set_struct(cfg, True)
    return cfg


_WALKED_FILES = 5000  # files of a config tree looked at, at most (a searchpath may name a large folder)


@memo(limit=32)
def _refuse_what_cannot_be_read(tree: Tree) -> None:
    """Hydra opens the config files itself: a YAML file of the tree that is not a regular file
    (a FIFO would hang its open, a link to /dev/zero fill the memory) or is larger than any
    config is refused first, by name (ValueError: the composition's error). Once a process a
    tree; the first _WALKED_FILES files of its folders."""
    from ..core.bounded_read import SOURCE_MAX_BYTES

    seen = 0
    for top in tree.dirs:
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            seen += len(files)
            if seen > _WALKED_FILES:
                return
            for name in files:
                if not name.endswith((".yaml", ".yml")):
                    continue
                path = os.path.join(folder, name)
                try:
                    info = os.stat(path)
                except OSError:
                    continue
                if not stat.S_ISREG(info.st_mode):
                    raise ValueError(f"{path}: not read: not a regular file")
                if info.st_size > SOURCE_MAX_BYTES:
                    raise ValueError(f"{path}: not read: larger than {SOURCE_MAX_BYTES} bytes")


class _YamlReadOnce:
    """The `yaml` module as OmegaConf.load sees it during a composition, with `load`
    remembering what each YAML text parses to (plain dicts, lists and scalars).

    Hydra reads every file of a config tree again for each composition (its own
    cache lives for one composition); a run composes one tree a dozen times, and
    PyYAML's pure-Python parser was the largest part of that. The text is the key,
    and each caller gets its own copy of the parsed data, which OmegaConf.load then
    turns into nodes as it always does: Hydra's composition itself is unchanged."""

    def __init__(self, module):
        self._module = module
        self._parsed: dict = {}

    def __getattr__(self, name):
        return getattr(self._module, name)

    def load(self, stream, Loader):  # noqa: N803 (PyYAML's parameter name)
        text = stream.read() if hasattr(stream, "read") else stream
        key = (text, f"{Loader.__module__}.{Loader.__qualname__}")  # OmegaConf makes the same class per call
        if key not in self._parsed:
            if "*" in text:  # an alias: the document is counted before it is expanded
                from ..core.yaml_read import MAX_EXPANDED_NODES, expanded_nodes

                if expanded_nodes(text) is None:
                    name = getattr(stream, "name", "a config file")
                    raise ValueError(
                        f"{name}: not read: its aliases expand past {MAX_EXPANDED_NODES:,} nodes (a YAML alias bomb)"
                    )
            self._parsed[key] = self._module.load(text, Loader=Loader)
        return copy.deepcopy(self._parsed[key])


_YAML_ONCE: _YamlReadOnce | None = None


@contextlib.contextmanager
def _yaml_read_once():
    global _YAML_ONCE
    import omegaconf.omegaconf as oc_module

    if _YAML_ONCE is None or _YAML_ONCE._module is not oc_module.yaml:
        _YAML_ONCE = _YamlReadOnce(oc_module.yaml)
    oc_module.yaml = _YAML_ONCE
    try:
        yield
    finally:
        oc_module.yaml = _YAML_ONCE._module


def copy_composed(cfg):
    """`copy.deepcopy(cfg)` of a composed config, built directly instead of through
    `copy`'s generic machinery, which takes ~3x as long on verl's ~1,200 nodes.

    The result is the object graph OmegaConf's own `__deepcopy__` methods build:
    the same node classes, metadata deep-copied (types, keys and other atomic
    values shared, as deepcopy shares them), value nodes' `_val` shared and their
    flags cache reset, containers' flags cache copied, the root's parent kept, each
    child's parent the new container. Any node or metadata of another shape (enum
    and union nodes, an unexpected attribute, a non-empty resolver cache) is
    handed to `copy.deepcopy` itself, as DictConfig.__deepcopy__ would hand it.
    """
    return _copy_node(cfg, cfg.__dict__["_parent"], {})


def release_copy(cfg) -> None:
    """Unlink a private copy that is no longer used: each node drops its parent.

    A config is a web of cycles (a node's parent holds the node), so a dropped copy
    waits for a full garbage collection, which walks every live object; thousands
    of copies made that most of a run's time. Without the cycles, reference
    counting frees the copy at once. The copy must not be used afterwards."""
    stack = [cfg]
    while stack:
        d = stack.pop().__dict__
        d["_parent"] = None
        content = d.get("_content")
        if isinstance(content, dict):
            stack.extend(content.values())
        elif isinstance(content, list):
            stack.extend(content)
        elif hasattr(content, "__dict__"):  # a union node's value node
            stack.append(content)


def _copy_shapes():
    global _SHAPES
    if _SHAPES is None:
        from omegaconf import DictConfig, ListConfig
        from omegaconf.base import ContainerMetadata, Metadata
        from omegaconf.nodes import AnyNode, BooleanNode, FloatNode, IntegerNode, StringNode

        _SHAPES = (
            frozenset({AnyNode, BooleanNode, FloatNode, IntegerNode, StringNode}),
            frozenset({DictConfig, ListConfig}),
            frozenset({Metadata, ContainerMetadata}),
            DictConfig,
        )
    return _SHAPES


_SHAPES = None
_VALUE_ATTRS = frozenset({"_metadata", "_parent", "_flags_cache", "_val"})
_CONTAINER_ATTRS = frozenset({"_metadata", "_parent", "_flags_cache", "_content"})
# Types whose values copy.deepcopy returns as they are (grows with the metaclasses met).
_ATOMIC = {type(None), bool, int, float, str, type}


def _copy_node(node, parent, memo):
    values, containers, _, dict_config = _copy_shapes()
    cls = type(node)
    d = node.__dict__
    if cls in values and d.keys() == _VALUE_ATTRS:
        res = cls.__new__(cls)
        memo[id(node)] = res
        rd = res.__dict__
        rd["_metadata"] = _copy_meta(d["_metadata"], memo)
        rd["_parent"] = parent
        rd["_flags_cache"] = None  # a fresh node's, as __deepcopy__ builds one
        rd["_val"] = d["_val"]
        return res
    if cls in containers and d.keys() == _CONTAINER_ATTRS:
        res = cls.__new__(cls)
        memo[id(node)] = res
        rd = res.__dict__
        rd["_metadata"] = _copy_meta(d["_metadata"], memo)
        rd["_flags_cache"] = _copy_value(d["_flags_cache"], memo)
        content = d["_content"]
        if isinstance(content, dict) and cls is dict_config:
            rd["_content"] = {k: _copy_node(v, res, memo) for k, v in content.items()}
        elif isinstance(content, list) and cls is not dict_config:
            rd["_content"] = [_copy_node(v, res, memo) for v in content]
        else:  # None, "???" or an interpolation string: kept as is, as __deepcopy__ does
            rd["_content"] = content
        rd["_parent"] = parent
        return res
    # Another kind of node: OmegaConf's own __deepcopy__, as a container copies a child.
    old = d["_parent"]
    try:
        d["_parent"] = None
        res = copy.deepcopy(node, memo)
    finally:
        d["_parent"] = old
    res.__dict__["_parent"] = parent
    return res


def _copy_meta(meta, memo):
    hit = memo.get(id(meta))
    if hit is not None:
        return hit
    if type(meta) not in _copy_shapes()[2]:
        return copy.deepcopy(meta, memo)
    res = type(meta).__new__(type(meta))
    memo[id(meta)] = res
    md, rd = meta.__dict__, res.__dict__
    rd.update(md)  # atomic fields (types, key, optional, ...) are shared, as deepcopy shares them
    for k, v in md.items():
        if type(v) not in _ATOMIC:
            rd[k] = _copy_value(v, memo)
    return res


def _copy_value(value, memo):
    """copy.deepcopy(value, memo) with the common cases done directly."""
    t = type(value)
    if t in _ATOMIC:
        return value
    if issubclass(t, type):  # a class (its metaclass is new here): deepcopy returns it as is
        _ATOMIC.add(t)
        return value
    hit = memo.get(id(value))
    if hit is not None:
        return hit
    if t is dict and all(type(k) in _ATOMIC and type(v) in _ATOMIC for k, v in value.items()):
        res = dict(value)
    elif t is defaultdict and value.default_factory is dict and not value:
        res = defaultdict(dict)
    else:
        return copy.deepcopy(value, memo)
    memo[id(value)] = res
    return res


def snapshot_of(cfg) -> dict:
    """Plain data for the fast check: dict/list/primitives; interpolations kept as text."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=False, throw_on_missing=False)


def group_names(tree: Tree) -> list[str]:
    """Every name Hydra's repository calls a config group ("" and `hydra` included).

    Candidates are the folders of the tree, of Hydra's own conf and of Hydra's
    ConfigStore; Hydra's `group_exists` decides, so the classification of an
    override as a group selection is Hydra's own.
    """
    import hydra
    from hydra._internal.config_repository import ConfigRepository
    from hydra._internal.utils import create_config_search_path
    from hydra.core.config_store import ConfigStore
    from hydra.core.plugins import Plugins

    Plugins.instance()  # registers hydra/launcher, hydra/sweeper, ... as a launch would

    candidates = {""}
    for top in (*tree.dirs, os.path.join(os.path.dirname(hydra.__file__), "conf")):
        for dirpath, dirnames, _ in os.walk(top):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            rel = os.path.relpath(dirpath, top)
            if rel != ".":
                candidates.add(rel.replace(os.sep, "/"))

    def store_groups(node: dict, prefix: str) -> None:
        for name, child in node.items():
            if isinstance(child, dict):
                path = f"{prefix}/{name}" if prefix else name
                candidates.add(path)
                store_groups(child, path)

    store_groups(ConfigStore.instance().repo, "")
    search = create_config_search_path(tree.primary)
    for d in tree.extra:
        search.append("hydra.searchpath", f"file://{d}")
    repo = ConfigRepository(config_search_path=search)
    return sorted(c for c in candidates if repo.group_exists(c))


class ConfigCache:
    """Snapshots and parsed overrides for one config tree, kept in memory and on disk.

    The tree's digest is computed at once (the result cache is keyed by it); what
    is kept on disk is read on first use, so a run whose every script comes from
    the result cache reads none of it."""

    def __init__(
        self, source: ConfigSource, use_disk: bool = True, digest: str | None = None, tree: Tree | None = None
    ):
        self.source = source  # the verl whose config this is (its dataclasses and entry points)
        self.tree = tree or Tree(source.path)  # the folders composed from
        self.use_disk = use_disk
        self.digest = digest or tree_hash(*self.tree.dirs)  # -j workers get the parent's
        self.dirty = False
        self.raw: dict = {}  # composed OmegaConf objects, this run only
        self._stored: dict | None = None  # snapshots, parsed, verdicts, groups
        self.loaded: tuple = (set(), set(), set())  # the keys read from disk (-j: a worker sends back the rest)
        self.shared_dir: str | None = None  # -j workers: where each publishes what it composed

    def _store(self, groups: list | None = None) -> dict:
        """The tables, read from disk on first use; a missing group list is `groups` when
        given, else listed with Hydra."""
        if self._stored is None:
            self._stored = {"snapshots": {}, "parsed": {}, "verdicts": {}, "groups": None}
            if self.use_disk:
                self._load()
            stored = self._stored
            self.loaded = (set(stored["snapshots"]), set(stored["parsed"]), set(stored["verdicts"]))
            if self._stored["groups"] is None:
                if groups is None:  # (a release's shipped list, else Hydra's own listing)
                    groups = self._shipped().get("groups") or group_names(self.tree)
                self._stored["groups"] = list(groups)
                self.dirty = True
        return self._stored

    def merge(self, snapshots: dict, parsed: dict, verdicts: dict, groups: list) -> None:
        """Take what a worker added (-j). The worker's group list stands for this cache's
        own when it has none yet: the parent then never imports Hydra to list the groups."""
        self._store(groups)
        if snapshots or parsed or verdicts:
            self._stored["snapshots"].update(snapshots)
            self._stored["parsed"].update(parsed)
            self._stored["verdicts"].update(verdicts)
            self.dirty = True

    def dependency(self) -> str:
        """The key under which a script's result records this tree (result_cache: its digest)."""
        return TREE_DEPENDENCY + os.pathsep.join(self.tree.dirs)

    @property
    def snapshots(self) -> dict:
        return self._store()["snapshots"]

    @property
    def parsed(self) -> dict:
        return self._store()["parsed"]

    @property
    def verdicts(self) -> dict:
        """Exact-path results, by override list."""
        return self._store()["verdicts"]

    @property
    def groups(self) -> list:
        return self._store()["groups"]

    def fork(self, **replaced) -> ConfigCache:
        """A cache of the same tree with some of its tables replaced (tests)."""
        other = ConfigCache.__new__(ConfigCache)
        other.__dict__.update(self.__dict__)
        other._stored = {**self._store(), **{k: v for k, v in replaced.items() if k != "raw"}}
        other.raw = replaced.get("raw", self.raw)
        return other

    # ---- disk -----------------------------------------------------------
    def _query(self) -> tuple:
        """The store's query of this tree's tables: its content and the Hydra that composed them."""
        return ("compositions", (self.digest, hydra_versions()))

    def _load(self) -> None:
        kept = queries.get(*self._query())
        data = kept[0] if kept is not None else None
        if not isinstance(data, dict):
            return
        snaps, parsed, groups = data.get("snapshots"), data.get("parsed"), data.get("groups")
        verdicts = data.get("verdicts")
        if not all(isinstance(x, dict) for x in (snaps, parsed, verdicts)) or not isinstance(groups, list):
            return
        if not all(isinstance(e, dict) and ("tree" in e or "error" in e) for e in snaps.values()):
            return
        self._stored.update(snapshots=snaps, parsed=parsed, groups=groups, verdicts=verdicts)

    def _shipped(self) -> dict:
        """{"snapshots": ..., "groups": ...} shipped for a released verl's tree of this content
        (store.released), read on the first composition this cache lacks; {} for any other tree."""
        if "_shipped_tables" not in self.__dict__:
            from ..store import released

            found = released.compositions(self.digest, hydra_versions()) if len(self.tree.dirs) == 1 else None
            snaps, groups = (found.get("snapshots"), found.get("groups")) if found else (None, None)
            ok = isinstance(snaps, dict) and isinstance(groups, list)
            self._shipped_tables = {"snapshots": snaps, "groups": groups, "root": self.tree.dirs[0]} if ok else {}
        return self._shipped_tables

    def save(self) -> None:
        if not self.use_disk or not self.dirty or self._stored is None:
            return
        data = {"snapshots": self.snapshots, "parsed": self.parsed, "groups": self.groups, "verdicts": self.verdicts}
        if queries.put(*self._query(), data):
            self.dirty = False

    # ---- overrides --------------------------------------------------------
    def parse(self, texts) -> list[dict]:
        """Hydra's grammar on each override, memoized in this cache."""
        from .grammar import parse_all

        before = len(self.parsed)
        records = parse_all(texts, self.parsed)
        if len(self.parsed) != before:
            self.dirty = True
        return records

    # ---- compositions ---------------------------------------------------
    def known(self, config_name: str, group_overrides: tuple) -> bool:
        """Whether that composition is at hand without composing it (made or kept before, or
        shipped for a release)."""
        key = json.dumps([config_name, list(group_overrides)])
        return key in self.snapshots or key in (self._shipped().get("snapshots") or {})

    def snapshot(self, config_name: str, group_overrides: tuple) -> dict:
        """{"tree": data} or {"error": message, "override": input line or None}."""
        key = json.dumps([config_name, list(group_overrides)])
        hit = self.snapshots.get(key)
        if hit is not None:
            return hit
        shipped = self._shipped()
        if key in shipped.get("snapshots", {}):  # (composed once, for the release: store.released)
            from ..store import released

            entry = self.snapshots[key] = released.absolute(shipped["snapshots"][key], shipped["root"])
            self.dirty = True
            return entry
        shared = SharedSnapshots(self.shared_dir, self.digest + key) if self.shared_dir else None  # trees differ
        entry = shared.claim() if shared is not None else None
        if entry is None:
            try:
                try:
                    cfg = self.composed(config_name, group_overrides)
                    entry = {"tree": snapshot_of(cfg)}
                except Exception as err:  # Hydra's composition errors, whatever their class
                    entry = {"error": _one_paragraph(str(err)), "kind": type(err).__name__}
            finally:
                if shared is not None:
                    shared.publish(entry)  # None (this worker failed): the others compose it themselves
        self.snapshots[key] = entry
        self.dirty = True
        return entry

    def composed(self, config_name: str, group_overrides: tuple):
        key = (config_name, tuple(group_overrides))
        if key not in self.raw:
            self.raw[key] = composed_once(self.digest, self.tree, config_name, key[1])
        return self.raw[key]


@functools.lru_cache(maxsize=32)  # a few MB each
def composed_once(digest: str, tree: Tree, config_name: str, group_overrides: tuple):
    """compose_raw, once a process for the same tree content (`digest`): the runs of a
    long-lived process (the language server, `--verl A --verl B`, the tests) share what they
    composed. Every user copies the composition before applying overrides to it
    (copy_composed), so it is never changed; an edited tree has another digest."""
    return compose_raw(tree, config_name, list(group_overrides))


class ConfigCaches:
    """The config trees of one run, each with its ConfigCache: the run's own (the verl checked
    against) and, made on first use, those some launches search instead (a project's
    `--config-path` folder with its `hydra.searchpath`, a verl vendored beside the script)."""

    def __init__(self, main: ConfigCache, explicit: bool = False, release=None):
        self.main = main
        self.explicit = explicit  # the run names its verl (--verl-config, --verl, VERL_CONFIG_DIR)
        self.release = release  # version -> ConfigSource of that release (releases.release_source); None: not fetched
        self._all: dict[tuple, ConfigCache] = {self.key(main.source, main.tree): main}
        self.shared_dir: str | None = None  # -j workers: where compositions are published
        self.begin_check()

    def begin_check(self) -> None:
        """Forget what was found of the scripts' projects (their verl, their entry modules): a
        long-lived process (the language server) asks again for each check, files may have changed."""
        self.repositories = Repositories()
        self._apps: dict[tuple, tuple] = {}
        self.choice = None  # the run's target.launch_verl.Choice (made by the pipeline): what it decided

    def forget_changed_trees(self) -> bool:
        """Make anew the config cache of every tree whose files changed since it was made (the
        language server checks again after an edit of a vendored verl's YAML): its compositions
        and verdicts are of the tree as it was, under the digest it had then. True when one had
        changed: what was read from its YAML outside Hydra (a root config's searchpath) is stale."""
        changed = False
        for key, cache in list(self._all.items()):
            if tree_hash(*cache.tree.dirs) == cache.digest:
                continue
            changed = True
            fresh = self._all[key] = ConfigCache(cache.source, use_disk=cache.use_disk, tree=cache.tree)
            fresh.shared_dir = cache.shared_dir
            if cache is self.main:
                self.main = fresh
        return changed

    def project_module(self, script_path: str, module: str, folders: tuple = ()) -> tuple:
        """(file, HydraApp or None) of a module or Python file of the script's project that a
        launch runs (`python3 -m myproj.main`, `python train.py`, a recipe of a repository that
        is verl's recipe tree), looked for in `folders` (where the launch runs) else from the
        repository's root; (None, None) when it is none of the project's (a module of verl's).
        The app is None where the module runs no Hydra app (an argparse program)."""
        repo = self.repositories.of(script_path)
        if repo is None or _verls_own(module, repo.root, folders):
            return None, None
        key = (repo.root, os.path.dirname(os.path.abspath(script_path)), module, folders)
        if key not in self._apps:
            self._apps[key] = _app_of(repo, script_path, module, folders)
        return self._apps[key]

    @staticmethod
    def key(source: ConfigSource, tree: Tree) -> tuple:
        return (source.path, tree.primary, tree.extra)

    def get(self, source: ConfigSource, tree: Tree | None = None) -> ConfigCache:
        tree = tree or Tree(source.path)
        key = self.key(source, tree)
        cache = self._all.get(key)
        if cache is None:
            cache = self._all[key] = ConfigCache(source, use_disk=self.main.use_disk, tree=tree)
            cache.shared_dir = self.shared_dir
        return cache

    def all(self) -> list[ConfigCache]:
        return list(self._all.values())

    def save(self) -> None:
        for cache in self._all.values():
            cache.save()


class SharedSnapshots:
    """One composition shared by the -j workers of a run: the first worker that needs it
    composes it and publishes the snapshot in the run's folder; a worker that needs it
    while another composes it waits for that one (up to WAIT seconds, then composes it
    itself). A run composes each (config, selections) once instead of once per worker."""

    WAIT = 30.0

    def __init__(self, folder: str, key: str):
        name = hashlib.sha256(key.encode()).hexdigest()[:32]
        self.path = os.path.join(folder, name + ".json")
        self.lock = self.path + ".lock"

    def claim(self) -> dict | None:
        """The published snapshot, or None when this worker is to compose it (it claimed it,
        or the worker that did gave up, or took longer than WAIT)."""
        import time

        try:
            os.close(os.open(self.lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return None  # ours to compose
        except FileExistsError:
            pass
        except OSError:
            return None
        deadline = time.monotonic() + self.WAIT
        while time.monotonic() < deadline:
            found = self._read()
            if found is not None:
                return found
            if os.path.exists(self.lock + ".gone"):
                return None
            time.sleep(0.005)
        return None

    def publish(self, entry: dict | None) -> None:
        """Publish the snapshot; None, or a snapshot that cannot be written: this worker could
        not make it, and the others compose it themselves instead of waiting."""
        if entry is not None:
            try:
                import tempfile

                fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".tmp")
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(entry, fh, separators=(",", ":"))
                os.replace(tmp, self.path)
                return
            except (OSError, TypeError, ValueError):
                pass
        try:
            os.close(os.open(self.lock + ".gone", os.O_CREAT | os.O_WRONLY))
        except OSError:
            pass

    def _read(self) -> dict | None:
        from ..core.bounded_read import read_bounded

        data = read_bounded(self.path, follow=False)
        try:
            return json.loads(data) if data is not None else None
        except (ValueError, RecursionError):
            return None


def _one_paragraph(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines()]
    out = []
    for ln in lines:
        if not ln or ln.startswith("Config search path") or ln.startswith("provider="):
            break
        out.append(ln)
    return " ".join(out)
