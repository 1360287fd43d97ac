"""The verl a launch imports: decided here, once per launch, as Python's import would find it.

`python3 -m verl.trainer.main_ppo` (or a project's own entry, whose code imports `verl`)
loads the first `verl` package on sys.path: the working directory for `-m` (the program's
own folder for `python3 x.py`), then PYTHONPATH's entries, then site-packages, where the
project's setup put it. So the verl of a launch is the first of (`decide`):

1. the one the run names: `--verl VERSION`, `--verl-config DIR`, `VERL_CONFIG_DIR`, the
   settings' `verl` / `verl-config`;
2. a `verl` package in a folder the entry module puts first on sys.path
   (`sys.path.insert(0, os.path.join(os.path.dirname(__file__), "verl"))`), else in the
   folder the launch runs in: the script's `cd` before it
   (`cd "$ROOT/luffy/verl"`), `ray job submit --working-dir`, `env -C`; with no `cd`, the
   folder the script is run from (its own folder or one above it, up to the repository
   root); for `python3 x.py`, the program's folder;
3. a `verl` package in a PYTHONPATH entry the script sets or exports;
4. what site-packages holds: the verl of the interpreter `--python PATH` names; else what the
   repository's setup installs there: a folder it installs with pip (`pip install -e verl`,
   `cd luffy/verl && pip install -e .`, in a setup script, a Dockerfile or a README), a git
   submodule of verl;
5. a release or git commit it pins (requirements files, pyproject, setup.py, setup
   scripts, Dockerfiles, README pip lines, REQUIRED_VERL.txt), the one nearest the script;
6. a checkout of verl the repository holds that nothing installs, where it holds one;
7. the installed verl beside the tool, else the newest release the tool knows: only for a
   repository that holds and names no verl.

Steps 4 and 5 read what speaks for the script's own part of the repository first: the
statements of the nearest folder at or above the script that makes any (a subproject's
README, a recipe's REQUIRED_VERL.txt), as ruff takes the nearest settings. A verl the
repository names but that is not here (a submodule not checked out, a clone its setup makes,
a git commit, a wheel pip cannot fetch, several that nothing here tells apart) leaves the
launch unchecked, saying which and the setting that picks one: never a check against
another verl.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import NamedTuple

from ..core.config_location import ConfigTreeError, version_file
from ..core.repository import Repository, root_of
from ..core.setup_statements import REQUIRED_VERL, Pin, names_verl, scope_of
from ..core.values import shown_path
from ..hydra_stage.tree import ConfigSource, in_verl, project_folders
from ..shell.directory import resolved, shown
from ..shell.words import Field
from ..sources.path_inserts import inserted
from .interpreter import ORIGIN as INTERPRETER

PICK = "--verl VERSION or --verl-config DIR picks one"


class Entry(NamedTuple):
    """A folder Python puts before site-packages for a launch, and how the script decides it."""

    folder: str | None  # None: known only at run time
    how: str  # as said in the report
    tail: str | None = None  # the known last part of a folder known only in part (`luffy/verl`)
    cwd: bool = False  # the folder the launch runs in (not an entry of the module's or PYTHONPATH's)


@dataclass(frozen=True)
class Place:
    """Where a launch runs, as its script says: the folders Python puts before site-packages."""

    folders: tuple  # (Entry, ...) in sys.path's order
    started: bool  # no `cd`: the folder the script is run from (several are looked in)


def working_folder(env: dict, script_path: str) -> str | None:
    """The folder a launch runs in as a path of this machine, where its environment's PWD (the
    script's `cd`, shell.directory) says it: from the folder the script starts in (its
    repository's root, else its own folder); None where it is not said or not known."""
    cwd = env.get("PWD")
    if cwd is None or script_path == "-":
        return None
    return resolved(cwd, root_of(script_path) or os.path.dirname(os.path.abspath(script_path)))


def place_of(spec, script_path: str, root: str | None) -> Place:
    """The launch's working directory (or its program's folder) and PYTHONPATH (module docstring)."""
    start = root or os.path.dirname(os.path.abspath(script_path))
    cwd_field = spec.env.get("PWD")
    folders = []
    app = getattr(spec, "app", None)
    if app is not None:  # the entry's own `sys.path.insert(0, ...)` runs before it imports verl
        folders += [Entry(f, f"sys.path.insert at {os.path.basename(app.file)}:{line}") for f, line in inserted(app.file)]
    if app is not None and app.file.endswith(".py") and spec.module.endswith(".py"):
        folders.append(Entry(os.path.dirname(app.file), f"the folder of {os.path.basename(app.file)}"))
        started = False
    elif cwd_field is None:
        started = True
    else:
        where = working_folder(spec.env, script_path)
        folders.append(Entry(where, f"the launch runs in {shown(cwd_field)}{_at(cwd_field)}", _tail(cwd_field), True))
        started = False
    cwd = working_folder(spec.env, script_path) if cwd_field is not None else start
    path_field = spec.env.get("PYTHONPATH")
    if path_field is not None:
        for entry in _entries(path_field):
            folder = resolved(entry, cwd or start)  # (a relative entry: from where Python starts)
            folders.append(Entry(folder, f"PYTHONPATH={path_field.display}{_at(path_field)}", _tail(entry)))
    return Place(tuple(folders), started)


def _tail(field) -> str | None:
    """The known text after the last piece known only at run time (`/luffy/verl/` of
    `$ROOT/luffy/verl/`), None where the value ends in one."""
    last = max((i for i, p in enumerate(field.pieces) if not isinstance(p, str)), default=None)
    if last is None:
        return None
    rest = "".join(p for p in field.pieces[last + 1 :] if isinstance(p, str)).strip("/")
    return rest or None


def _at(field) -> str:
    loc = getattr(field, "loc", None)
    return f" ({shown_path(loc.path)}:{loc.line})" if loc is not None else ""


def _entries(field) -> list:
    """PYTHONPATH's entries in order, each a Field (known text split at `:`; a part known only at
    run time, an inherited `$PYTHONPATH`, stays in the entry it is in); empty entries left out."""
    out: list = []
    current: list = []
    for piece in field.pieces:
        if isinstance(piece, str):
            parts = piece.split(":")
            current.append(parts[0])
            for part in parts[1:]:
                out.append(current)
                current = [part]
        else:
            current.append(piece)
    out.append(current)
    return [Field(tuple(p for p in entry if p != ""), field.loc) for entry in out if any(p != "" for p in entry)]


class Choice:
    """The verl of each launch of a run (`decide`), each answer kept for the run."""

    def __init__(self, main: ConfigSource, explicit: bool, release=None):
        self.main = main  # the installed verl, or the newest release (the run's)
        self.explicit = explicit  # the run names its verl (step 1)
        self.release = release  # version -> ConfigSource of that release's wheel; None: not fetched
        self._kept: dict = {}
        self._commits: dict = {}  # (commit, url) -> ConfigSource, or the ConfigTreeError of its fetch (once a run)

    def decide(self, spec, script_path: str, repo: Repository | None) -> ConfigSource:
        """The verl of one launch (module docstring)."""
        if self.explicit:
            return self.main
        module = spec.module
        inner = in_verl(module)
        prefix = module[: -len(inner)].rstrip(".").split(".") if inner and module != inner else []
        root = repo.root if repo is not None else None
        place = place_of(spec, script_path, root) if script_path != "-" else Place((), False)
        key = (root, script_path if place.started else os.path.dirname(script_path), tuple(prefix), place)
        if key not in self._kept:
            self._kept[key] = self._decide(place, prefix, script_path, repo)
        return self._kept[key]

    def _decide(self, place: Place, prefix: list, script_path: str, repo: Repository | None) -> ConfigSource:
        # 2, 3: the folders before site-packages
        run = _documented_run(repo, script_path) if place.started and repo is not None else None
        if run is not None:  # the repository's pages run the script from a folder (`cd verl && bash x.sh`)
            folder, how = run
            if not os.path.isdir(folder):
                rel = os.path.relpath(folder, repo.root)
                return _missing(f"{how} runs this script from {rel}/, a checkout of verl that is not here", how)
            found = _package_in(folder, prefix, repo)
            if found is not None:
                return _from_package(found, f"{how} runs it from {os.path.relpath(folder, repo.root)}: {shown_path(found)}")
        elif place.started and script_path != "-":
            found = _held_above(script_path, prefix, repo)
            if found is not None:
                return found
        unknown = []
        for entry in place.folders:
            folder = entry.folder
            if folder is None or not os.path.isdir(folder):
                folder = _mapped(folder, entry.tail, repo) if repo is not None else None
                if folder is None:  # (a PYTHONPATH entry known only at run time is the environment's, as its
                    if entry.folder is None and entry.cwd:  # installed packages are: no caveat said for it)
                        unknown.append(entry.how)
                    continue
            found = _package_in(folder, prefix, repo)
            if found is not None:
                return _from_package(found, f"{entry.how}: {shown_path(found)}")
        # 4-6: what the repository installs, pins or holds; with --python, that interpreter's site-packages
        if repo is not None and not self.main.origin.startswith(INTERPRETER):
            found = self._of_repository(repo, script_path)
            if found is not None:
                if unknown and not found.missing:
                    found = replace(found, origin=f"{found.origin}; {unknown[0]} is known only at run time")
                return found
        if repo is None and not place.started and script_path != "-":  # no repository: what is held above it
            found = _held_above(script_path, prefix, None)
            if found is not None:
                return found
        # 7: the tool's own verl
        return self.main

    def _of_repository(self, repo: Repository, script_path: str) -> ConfigSource | None:
        """Steps 4-6 (module docstring): a verl here that the repository installs (a git submodule
        checked out, a folder its setup installs with pip), else a release it pins, else a verl it
        names that is not here (a clone its setup makes, a submodule not checked out, a git
        commit: unchecked), else a verl it holds that nothing installs."""
        absent = None  # a verl the repository installs that is not here: (why, how)
        for folder, path, url in repo.submodules():
            package = repo.holds_verl(folder)
            if package is not None:
                return _from_package(package, f"git submodule {path}, {os.path.relpath(package, repo.root)}")
            if names_verl(f"{path} {url}") and absent is None:
                why = f"verl is the git submodule {path}, not checked out here (git submodule update --init)"
                absent = (why, f"git submodule {path}", None)
        installs = [i for i in _nearest(repo, script_path, repo.installs()) if _verl_install(i, repo)]
        packages = [p for p in dict.fromkeys(_verl_install(i, repo) for i in installs) if p]
        here = [p for p in packages if os.path.isdir(p)]
        if len(here) > 1:
            named = ", ".join(f"{shown_path(p)} ({i.where(repo.root)})" for p, i in _firsts(installs, repo))
            return _missing(f"the repository installs several verls ({named}): {PICK}", "several the repository installs")
        if here:
            first = next(i for i in installs if _verl_install(i, repo) == here[0])
            how = f"installed by {first.where(repo.root)}, {os.path.relpath(here[0], repo.root)}"
            return _from_package(here[0], how)
        if installs and absent is None:  # a folder named verl that the setup installs, not here (a clone it makes)
            first = installs[0]
            rel = os.path.relpath(first.folder, repo.root)
            how = f"installed by {first.where(repo.root)}"
            why = f"verl is {rel}/, {how} with pip install -e, and {rel}/verl is not here (clone it there, or give --verl-config)"
            absent = (why, how, first.path)
        pins = _nearest(repo, script_path, repo.pins())
        pinned = self._pinned(pins, repo) if pins else None
        if pinned is not None and not pinned.missing:
            if absent is not None and absent[2] not in {p.path for p in pins}:  # (two the repository names: the one that can
                pinned = replace(pinned, origin=f"{pinned.origin}; also {absent[1]}, not here")  # be had, and)
            return pinned
        if absent is not None:
            return _missing(absent[0], absent[1])
        if pinned is not None:
            return pinned
        held = list(repo.walk().packages)
        if len(held) == 1:
            how = (
                f"the one verl the repository holds, {os.path.relpath(held[0], repo.root)} "
                f"(nothing here installs it: pip install -e {os.path.relpath(os.path.dirname(held[0]), repo.root)})"
            )
            return _from_package(held[0], how)
        if held:
            named = ", ".join(os.path.relpath(p, repo.root) for p in held)
            why = f"the repository holds several verls and nothing here says which this launch runs ({named}): {PICK}"
            return _missing(why, "several the repository holds")
        return _named_elsewhere(repo, script_path)

    def _pinned(self, pins: list, repo: Repository) -> ConfigSource:
        """The verl the pins nearest the script ask for (module docstring, step 5)."""
        first = pins[0]
        where = first.where(repo.root)
        distinct = list(dict.fromkeys((p.version, p.ref) for p in pins))
        if os.path.basename(first.path) == REQUIRED_VERL and len(distinct) > 1:  # the file offers options
            named = ", ".join(v or f"commit {r}" for v, r in distinct)
            rel = os.path.relpath(first.path, repo.root)
            return _missing(f"{rel} names several verls ({named}): {PICK}", f"several named by {rel}")
        pins = [_as_release(p) for p in pins]
        releases = [p for p in pins if p.version]
        if releases:
            first = releases[0]
            where = first.where(repo.root)
            others = sorted({p.version for p in releases if p.version != first.version})
            also = f"; {', '.join(others)} elsewhere" if others else ""
            refs = [p for p in pins if p.ref]
            if refs:
                also += f"; a git reference of verl in {refs[0].where(repo.root)}"
            return self._release_of(first, f"pinned, {where}{also}")
        if not _commit(first.ref):  # a branch moves: no one tree is the one the launch meets
            how = f"pinned to {first.ref}, {where}"
            why = (
                f"the project installs verl at {first.ref} ({how}), not a release or a commit: that verl is not at "
                f"hand here (--verl-config DIR of a checkout at {first.ref}, or --verl VERSION, names one)"
            )
            return _missing(why, how)
        return self._commit_of(first, f"pinned to commit {first.ref}, {where}")

    def _commit_of(self, pin: Pin, how: str) -> ConfigSource:
        """The tree of a pinned commit, fetched once (releases.commit_source); unchecked where it
        cannot be had, with the command that makes the launch checkable."""
        key = (pin.ref, pin.url)
        if key not in self._commits:
            try:
                if self.release is None:
                    raise ConfigTreeError("commits of verl are not fetched in this run")
                from .releases import commit_source

                self._commits[key] = commit_source(pin.ref, pin.url)
            except ConfigTreeError as err:
                self._commits[key] = err
        found = self._commits[key]
        if isinstance(found, ConfigTreeError):
            why = f"the project installs verl at commit {pin.ref} ({how}), not at hand here: {found} (or --verl git:{pin.ref})"
            return _missing(why, how)
        return replace(found, origin=f"{how}: the commit's tree")

    def _release_of(self, pin: Pin, how: str) -> ConfigSource:
        main = self.main
        if main.origin == "installed" and main.verl_version == pin.version:  # pip: "already satisfied"
            return replace(main, origin=f"{how}: the installed verl {pin.version}")
        try:
            if self.release is None:
                raise ConfigTreeError("releases are not fetched in this run")
            fetched = self.release(pin.version)
        except ConfigTreeError as err:
            return ConfigSource("", pin.version, None, how, missing=f"the project's verl {pin.version} ({how}) is not at hand here: {err}")
        return replace(fetched, origin=f"{how}: the release's wheel")


def _documented_run(repo: Repository, script_path: str) -> tuple[str, str] | None:
    """(folder, how) where the repository's pages or setup scripts run this script from (`cd
    exp_scripts && bash train.sh`; `cd verl && bash qw3.sh` in the README beside it), for a
    script with no `cd` of its own: a folder here, or a verl checkout's (named verl) that is
    not; None where none says, or the folder is another that is not here."""
    here = os.path.abspath(script_path)
    name = os.path.basename(here)
    for run in repo.runs():
        if run.cwd is None or os.path.basename(run.script) != name:
            continue
        folder = os.path.normpath(os.path.join(run.scope, run.cwd))
        exact = os.path.normpath(os.path.join(folder, run.script)) == here
        beside = run.scope == os.path.dirname(here)  # the page beside the script speaks of it
        if not (exact or beside) or run.cwd == ".":
            continue
        if os.path.isdir(folder) or names_verl(run.cwd):
            return folder, run.where(repo.root)
    return None


def _named_elsewhere(repo: Repository, script_path: str) -> ConfigSource | None:
    """A repository that names verls for its other parts (a recipe's REQUIRED_VERL.txt, a
    subproject's README) but none at or above this script: unchecked, naming them (which of
    them, or another, this launch runs, nothing here says); None where it names none."""
    named: dict = {}  # each verl named, with the first place that names it
    for p in repo.pins():
        named.setdefault(p.version or f"commit {p.ref}", p.where(repo.root))
    for i in repo.installs():
        if _verl_install(i, repo):
            named.setdefault(os.path.relpath(i.folder, repo.root) + "/", i.where(repo.root))
    if not named:
        return None
    folder = os.path.relpath(os.path.dirname(os.path.abspath(script_path)), repo.root) if script_path != "-" else "."
    shown = ", ".join(f"{v} ({w})" for v, w in list(named.items())[:3]) + (", ..." if len(named) > 3 else "")
    return _missing(
        f"nothing at or above {folder}/ says which verl this launch runs, and the repository names verls for its "
        f"other parts ({shown}): {PICK}",
        f"none named for {folder}/",
    )


def _held_above(script_path: str, prefix: list, repo: Repository | None) -> ConfigSource | None:
    """The verl a folder the script may be run from holds (its own, or one above it up to its
    repository's root: hydra_stage.tree.project_folders), said `vendored, ...`; None where none does."""
    for folder in project_folders(script_path):
        found = _package_in(folder, prefix, repo)
        if found is not None:
            return _from_package(found, _vendored_how(found))
    return None


def _package_in(folder: str, prefix: list, repo: Repository | None) -> str | None:
    """The `verl` package `import [prefix.]verl` finds in `folder`, or None: for a top-level
    `verl`, a regular package (its `__init__.py`; a folder without one is a namespace portion,
    which a regular `verl` later on sys.path wins over)."""
    package = os.path.join(folder, *prefix, "verl")
    if prefix:  # `myproj.verl`: a folder without `__init__.py` imports too (a namespace package of myproj's)
        return package if os.path.isdir(os.path.join(package, "trainer")) else None
    init = os.path.join(package, "__init__.py")
    there = repo.exists(init) if repo is not None else os.path.isfile(init)
    return package if there else None


def _mapped(folder: str | None, tail: str | None, repo: Repository) -> str | None:
    """A working directory or PYTHONPATH entry that is not a folder here (a path of the training
    machine; `$ROOT/luffy/verl`, whose known last part is `tail`): the one folder of the
    repository holding a verl package whose path ends with its last folders (`luffy/verl`; at
    least two of a path known whole), else None."""
    tail = folder if folder is not None else tail
    if not tail:
        return None
    parts = [p for p in tail.split(os.sep) if p and p != "."]
    holders = [os.path.dirname(p) for p in repo.walk().packages]
    for k in range(len(parts), 0, -1):
        if k == 1 and folder is not None and len(parts) > 1:
            break  # a path known whole: at least its last two folders must be the repository's
        end = os.sep + os.path.join(*parts[-k:])
        matches = [h for h in holders if (h + os.sep).endswith(end + os.sep)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            return None
    return None


def _nearest(repo: Repository, script_path: str, statements: list) -> list:
    """The statements (installs or pins) of the nearest folder at or above the script that makes
    any (Repository.scope_of); none when no folder on the way does."""
    by_scope: dict = {}
    for s in statements:
        by_scope.setdefault(getattr(s, "scope", None) or scope_of(s.path, repo.root), []).append(s)
    cur = repo.root if script_path == "-" else os.path.dirname(os.path.abspath(script_path))
    for _ in range(64):
        if cur in by_scope:
            return by_scope[cur]
        if cur == repo.root or os.path.dirname(cur) == cur:
            break
        cur = os.path.dirname(cur)
    return []


def _verl_install(install, repo: Repository) -> str | None:
    """The verl package an install puts in site-packages: `<folder>/verl` where it holds one;
    for a folder that is not here and whose path names verl, `<folder>/verl` (not here)."""
    if os.path.isdir(install.folder):
        return repo.holds_verl(install.folder)
    rel = os.path.relpath(install.folder, repo.root)
    return os.path.join(install.folder, "verl") if names_verl(rel) else None


def _firsts(installs: list, repo: Repository) -> list:
    seen: dict = {}
    for i in installs:
        seen.setdefault(_verl_install(i, repo), i)
    return [(p, i) for p, i in seen.items() if p]


def _vendored_how(package: str) -> str:
    rel = os.path.relpath(package)
    shown = os.path.join(os.path.basename(os.path.dirname(package)), "verl") if rel.startswith("..") else rel
    return f"vendored, {shown}"


def _from_package(package: str, how: str) -> ConfigSource:
    config = os.path.join(package, "trainer", "config")
    if not os.path.isfile(os.path.join(config, "ppo_trainer.yaml")):
        return ConfigSource(
            "", version_file(package), package, how, missing=f"the verl it imports ({how}) has no trainer/config/ppo_trainer.yaml"
        )
    return ConfigSource(os.path.abspath(config), version_file(package), package, how)


def _missing(why: str, how: str) -> ConfigSource:
    """A verl the launch runs that is not at hand here: `how` says which (the report's
    `verl (how)`), `why` why it is not checked."""
    return ConfigSource("", None, None, how, missing=why)


def _as_release(pin: Pin) -> Pin:
    """A git reference that is a release's tag (`@v0.5.0`) as that release."""
    m = re.fullmatch(r"v?([0-9]+\.[0-9]+(?:\.[0-9]+)?(?:\.post[0-9]+)?)", pin.ref or "")
    return replace(pin, version=m.group(1), ref=None) if m else pin


def _commit(ref: str) -> bool:
    return len(ref) >= 7 and all(c in "0123456789abcdef" for c in ref)
