"""Where the verl config tree is, which verl it belongs to, and its digest.

Light to import (os, hashlib): the command's start (command_memo.py) asks these same
questions of the file system before it writes a kept report, and the Hydra stage
(hydra_stage/tree.py) builds its ConfigSource from the answers.

The tree comes from `--verl-config DIR`, else `VERL_CONFIG_DIR`, else the installed `verl`
package located with importlib's find_spec (never imported: importing verl pulls torch and Ray).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os

from ..store.file_digests import file_digest
from ..store.session import memo

DEFAULT_RELEASE = "0.9.1"  # checked against when no verl is named, installed or carried by the project
INSTALL_HINT = f"pip install --no-deps verl=={DEFAULT_RELEASE}"
TREE_DEPENDENCY = "tree:"  # a result's dependency on a config tree: "tree:" + its folders (os.pathsep)


class ConfigTreeError(Exception):
    """The tool cannot find or read a verl config tree (exit status 2)."""


def found(explicit: str | None) -> tuple[str, str | None, str | None, str]:
    """(config folder, verl version, verl package folder, how it was found) of the tree a run
    checks against when no release is named."""
    if explicit:
        return from_dir(explicit, "--verl-config")
    env = os.environ.get("VERL_CONFIG_DIR")
    if env:
        return from_dir(env, "VERL_CONFIG_DIR")
    root = installed_root()
    if root is None:
        raise ConfigTreeError(
            "no verl config tree: verl is not installed here. Install it without its heavy "
            f"dependencies with `{INSTALL_HINT}`, or pass --verl-config DIR"
        )
    path = os.path.join(root, "trainer", "config")
    if not os.path.isfile(os.path.join(path, "ppo_trainer.yaml")):
        raise ConfigTreeError(f"verl at {root} has no trainer/config/ppo_trainer.yaml; `{INSTALL_HINT}`")
    return path, installed_version(root), root, "installed"


def from_dir(path: str, origin: str) -> tuple[str, str | None, str | None, str]:
    if not os.path.isdir(path):
        raise ConfigTreeError(f"{origin}: {path} is not a directory")
    if not os.path.isfile(os.path.join(path, "ppo_trainer.yaml")):
        raise ConfigTreeError(f"{origin}: {path} has no ppo_trainer.yaml (expected verl/trainer/config)")
    abspath = os.path.abspath(path)
    package_root = os.path.dirname(os.path.dirname(abspath))
    return abspath, version_file(package_root), package_root, origin


def installed_root() -> str | None:
    """The folder of the `verl` package `import verl` would load here, or None."""
    try:
        spec = importlib.util.find_spec("verl")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def installed_version(root: str) -> str | None:
    site = os.path.dirname(root)
    for name in sorted(os.listdir(site)) if os.path.isdir(site) else []:
        if name.startswith("verl-") and name.endswith(".dist-info"):
            version = name[len("verl-") : -len(".dist-info")]  # verl-0.9.1.dist-info
            if version and "-" not in version:
                return version
    return version_file(root)


def version_file(root: str) -> str | None:
    from .bounded_read import read_bounded

    data = read_bounded(os.path.join(root, "version", "version"), 4096)
    return (data.decode("utf-8", "replace").strip() or None) if data is not None else None


def has_sources(root: str | None) -> bool:
    return bool(root) and os.path.isfile(os.path.join(root, "trainer", "main_ppo.py"))


@memo(limit=16)
def entry_root(path: str, package_root: str | None, version: str | None) -> tuple[str | None, str]:
    """(verl package dir whose sources describe this tree, or None; how it was chosen)."""
    if has_sources(package_root):
        return package_root, f"verl sources at {package_root}"
    root = installed_root()
    if root is not None and has_sources(root):
        same_version = version is not None and version == installed_version(root)
        if same_version or _same_file(os.path.join(path, "ppo_trainer.yaml"), root):
            return root, f"the installed verl at {root} (same version or the same ppo_trainer.yaml)"
    return None, "verl-preflight's table of verl's entry points (no verl sources beside the config tree)"


def _same_file(yaml_path: str, root: str) -> bool:
    from .bounded_read import read_bounded

    mine = read_bounded(yaml_path)
    return mine is not None and mine == read_bounded(os.path.join(root, "trainer", "config", "ppo_trainer.yaml"))


@memo(limit=64)
def current_tree_hash(dependency: str) -> str | None:
    """The digest of a tree a result depends on, as it is now (once a run: trees do not change in one)."""
    paths = dependency[len(TREE_DEPENDENCY) :].split(os.pathsep)
    if not all(os.path.isdir(p) for p in paths):
        return None
    try:
        return tree_hash(*paths)
    except OSError:
        return None


def tree_hash(*paths: str) -> str:
    """The SHA-256 of the YAML files under the folders Hydra searches (their names and the digests of their bytes)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(path.encode() + b"\0\0" if len(paths) > 1 else b"")
        top = os.path.abspath(path)
        start = len(top) if top.endswith(os.sep) else len(top) + 1  # a path below it, relative to it (relpath's)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for name in sorted(filenames):
                if not name.endswith((".yaml", ".yml")):
                    continue
                full = os.path.join(dirpath, name)
                digest = file_digest(full) or "unreadable"  # (a FIFO, a device: the composition names it)
                h.update(full[start:].encode() + b"\0" + digest.encode() + b"\0")
    return h.hexdigest()
