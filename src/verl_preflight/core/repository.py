"""The user's repository a script belongs to: its root, its own packages, and the verl it runs.

A project built on verl runs its scripts from its root (its README says `bash
scripts/run.sh` there), imports its own packages and its vendored verl from there, and
keeps its settings there. The root is the nearest folder at or above the script's that
holds one of MARKERS, as git, pip and ruff find a project: a `.git` (a clone or a
submodule's checkout), a `pyproject.toml`, a `setup.py` or a `setup.cfg`.

Where its verl comes from, in the order Python and the project's setup decide it
(`Repository.verl`):

1. a `verl` package at the root (`python3 -m verl.trainer.main_ppo` run there imports it
   before any installed one);
2. a verl checkout the project keeps in a folder: a git submodule (`.gitmodules`), or a
   folder holding a `verl` package beside its own `setup.py` or `pyproject.toml` (a fork
   vendored whole), which the project's setup installs (`pip install -e verl`);
3. a release the project pins: `verl==X` in its requirements files, its pyproject's
   dependencies, its setup.py, or a `pip install` of its setup scripts and Dockerfiles;
4. none of these: the installed verl (the caller's default).

Every file it reads or looks for is kept with its digest in `files_read` (None: not there):
the results of the scripts of the repository depend on them (validate.validate_script adds
them to each script's own record), so a result is checked again when one changes or
appears, and no result of another repository depends on them.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field

from ..store.dependencies import STATEMENTS
from ..store.file_digests import file_digest
from .bounded_read import ReadError, TooLarge
from .script_reader import read_script
from .setup_statements import (
    Statements,
    Walk,
    scope_of,
    statements,
    walk_repository,
)

MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
_DEPTH = 64  # folders climbed at most (a path deeper than this is not a project's layout)


def root_of(path: str) -> str | None:
    """The repository root of a file or folder (module docstring), as an absolute path; None
    where no folder above it holds a marker (a script on its own, standard input)."""
    if path == "-":
        return None
    here = os.path.abspath(path)
    cur = here if os.path.isdir(here) else os.path.dirname(here)
    for _ in range(_DEPTH):
        if any(os.path.lexists(os.path.join(cur, marker)) for marker in MARKERS):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent
    return None


_NAME = r"([A-Za-z_][A-Za-z0-9_]*)"
# in a README: `export NAME=...`, `NAME=... bash x.sh` (a command's environment)
_DOC_ASSIGNED = re.compile(rf"(?:\bexport\s+{_NAME}=|(?:^|[\s`$]){_NAME}=\S*\s+(?:bash|sh|\./|source)\b)")
# in a CI or container file: `ENV NAME ...`, `NAME: value` (a workflow's env:), `NAME=value` (.env)
_CI_ASSIGNED = re.compile(rf"(?:^\s*ENV\s+{_NAME}\b|^\s+([A-Z_][A-Z0-9_]*):\s*\S|^{_NAME}=|\bexport\s+{_NAME}=)")
# in a wrapper script: `export NAME=...`, `NAME=... bash inner.sh`
_WRAPPER_ASSIGNED = re.compile(rf"(?:\bexport\s+{_NAME}=|^\s*{_NAME}=\S*\s+(?:bash|sh|\./|source)\b)")
_MAX_FILES = 2000  # files a repository's walk reads at most
# `source FILE` / `. FILE`: the file's path as written (a variable before its name is kept in it)
_SOURCED = re.compile(r"(?:^|[;&|(]|\s)(?:source|\.)\s+[\"']?([^\s\"';&|)]+)", re.M)
_TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".tmpl", ".dist")
_WRAPPER_DEPTH = 3  # wrappers of wrappers followed


def _listing(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


class Repository:
    """One repository root and what it says of verl and of its own packages (module docstring).
    Made once per root by a run (ConfigCaches.repository), never kept across runs."""

    def __init__(self, root: str):
        self.root = root
        self._walk: Walk | None = None
        self._statements: Statements | None = None
        self._scripts: list | None = None
        self.files_read: dict[str, str | None] = {}  # every file read or looked for: path -> digest or None

    def text(self, path: str) -> str | None:
        """A file of the repository as text (None: not there or not readable), kept in files_read."""
        try:
            data = read_script(path)
        except (ReadError, TooLarge):
            data = None
        self.files_read[os.path.abspath(path)] = hashlib.sha256(data).hexdigest() if data is not None else None
        return data.decode("utf-8", "replace") if data is not None else None

    def exists(self, path: str) -> bool:
        """Whether a file is at `path`, kept in files_read (a file that appears later re-checks)."""
        digest = file_digest(path) if os.path.isfile(path) else None
        self.files_read[os.path.abspath(path)] = digest
        return digest is not None

    # ---- its own modules ----------------------------------------------------------------
    def module_file(self, module: str, folders: tuple = ()) -> str | None:
        """The file `python3 -m module` runs when the module is the project's (`pkg.mod` ->
        pkg/mod.py or pkg/mod/__main__.py), looked for in `folders` (where the launch runs),
        else under the root; None otherwise. `recipe.X.Y` in a repository that is verl's recipe
        tree (no `recipe/` folder in it, its own X/Y.py: the repository is meant to sit at
        verl/recipe) is that X/Y.py."""
        parts = module.split(".")
        if not all(p.isidentifier() for p in parts):
            return None
        for folder in (*folders, self.root):
            base = os.path.join(folder, *parts)
            for candidate in (base + ".py", os.path.join(base, "__main__.py")):
                if self.exists(candidate):
                    return candidate
        if parts[0] == "recipe" and len(parts) > 1 and not os.path.isdir(os.path.join(self.root, "recipe")):
            base = os.path.join(self.root, *parts[1:])
            return next((c for c in (base + ".py", os.path.join(base, "__main__.py")) if self.exists(c)), None)
        return None

    def script_file(self, path: str, script_dir: str) -> str | None:
        """The file `python3 path/to/x.py` runs: from the root (where the project's scripts run),
        else from the script's own folder."""
        if not path.endswith(".py"):
            return None
        for base in (self.root, script_dir):
            candidate = os.path.normpath(os.path.join(base, path))
            if self.exists(candidate):
                return candidate
        return None

    def package_dir(self, dotted: str) -> str | None:
        """`pkg://a/b` or `pkg://a.b` of one of the project's packages: its folder under the root."""
        parts = [p for p in re.split(r"[./]", dotted) if p]
        if not parts or not self.exists(os.path.join(self.root, parts[0], "__init__.py")):
            return None
        folder = os.path.join(self.root, *parts)
        return folder if os.path.isdir(folder) else None

    # ---- the verl it holds, installs and pins ----------------------------------------------
    def walk(self) -> Walk:
        """What the repository's folders hold that tells of its verl (walk_repository), once; a
        result that reads it depends on it as on the statements (their digest holds the walk's)."""
        if self._walk is None:
            self._walk = walk_repository(self.root)
            self.statements()
        return self._walk

    def statements(self) -> Statements:
        """What its setup files and pages say (setup_statements.statements: every file read once).
        A result that rests on them depends on what they say (STATEMENTS: a page edited elsewhere
        re-checks nothing)."""
        if self._statements is None:
            self._statements = statements(self.root, self.walk())
            self.files_read[STATEMENTS + self.root] = self._statements.digest
        return self._statements

    def holds_verl(self, folder: str) -> str | None:
        """The `verl` package folder `import verl` finds in `folder` (a regular package: its
        `__init__.py`), kept in files_read; None where there is none."""
        package = os.path.join(folder, "verl")
        return package if self.exists(os.path.join(package, "__init__.py")) else None

    def submodules(self) -> list[tuple[str, str, str]]:
        """(folder, path, url) of each git submodule of the repository (`.gitmodules`)."""
        out = []
        for path, url in _submodules(self.text(os.path.join(self.root, ".gitmodules")) or ""):
            folder = os.path.normpath(os.path.join(self.root, path))
            if folder.startswith(self.root + os.sep):
                out.append((folder, path, url))
        return out

    def installs(self) -> tuple:
        """Every folder its setup installs with pip (`pip install -e verl`, `cd luffy/verl && pip
        install -e .`, `pip install ./x`), each with the folder it speaks for (Install.scope)."""
        return self.statements().installs

    def runs(self) -> tuple:
        """Every run of a shell script in its pages and setup scripts, with the folder it is run
        from (`cd exp_scripts && bash train.sh`)."""
        return self.statements().runs

    def pins(self) -> tuple:
        """Every verl release or git reference its files ask for, in the order walk_repository
        lists them (`verl==X`, `verl @ git+...@REF`, a clone of verl then `git checkout REF`,
        REQUIRED_VERL.txt's `TAG=` and `VERL_COMMIT=`, a uv git source)."""
        return self.statements().pins

    def scope_of(self, path: str) -> str:
        """The folder a file of setup or documentation speaks for: its own, or, for a file in a
        documentation or setup folder (docs/, scripts/, docker/, assets/, .github/), the folder
        above that one."""
        return scope_of(path, self.root)

    # ---- the inputs its scripts take from the environment ----------------------------------
    def documented_inputs(self, script_path: str, read=None) -> dict[str, str]:
        """The variables the project gives a value outside the script, each with where it says so
        first (`README.md:12`): exported in its README or docs (`export N_GPUS=8`, `N_GPUS=8 bash
        run.sh`), by a script of the project that runs this one, or runs one that does (a wrapper's
        `export X=...` or `X=... bash inner.sh`), or in its CI and container files (a workflow's `env:`, a
        Dockerfile's `ENV`, a `.env` file), or in the template of a file the script sources that
        the user makes from it (`source config.env` and `config.env.example`, `.sample`,
        `.template`). `read(path)`: the text of a file, read by the caller's
        reader (source.Recorder.text), so that the script's result depends on what was read for it
        and on nothing read for another script."""
        read = read or self.text
        found: dict[str, str] = {}
        for path in self._documents():
            self._inputs_of(path, _DOC_ASSIGNED, found, read(path))
        for path in self._ci_files():
            self._inputs_of(path, _CI_ASSIGNED, found, read(path))
        for name, where in self.script_inputs(script_path, read).items():
            found.setdefault(name, where)
        return found

    def script_inputs(self, script_path: str, read=None) -> dict[str, str]:
        """The variables given to this script itself (documented_inputs): by the template of a file
        it sources, or by a wrapper that runs it (or runs one that does) and exports them. Under
        `set -u` only these make a variable the script never assigns an input: a README line or
        a CI step may be about another script."""
        read = read or self.text
        found: dict[str, str] = {}
        for path in self._templates(script_path, read):  # a sourced file's template: what it sets
            self._inputs_of(path, _CI_ASSIGNED, found, read(path))
        names, seen = [os.path.basename(script_path)], {os.path.abspath(script_path)}
        for _ in range(_WRAPPER_DEPTH):  # a wrapper of this script, a wrapper of that one (run-direct.sh runs
            outer = []  # train-multigpu.sh, which submits this script): what each exports before it runs
            for path in self._shell_scripts():
                if os.path.abspath(path) in seen:
                    continue
                text = read(path) or ""
                if any(n in text for n in names):
                    seen.add(os.path.abspath(path))
                    outer.append(os.path.basename(path))
                    self._inputs_of(path, _WRAPPER_ASSIGNED, found, text)
            if not outer:
                break
            names = outer
        return found

    def _templates(self, script_path: str, read) -> list[str]:
        """The templates of the files the script sources (`source ${DIR}/config.env`: a
        `config.env.example`, `.sample`, `.template`, `.tmpl` or `.dist` beside the script or at
        the root), where the sourced file itself is not here (the user makes it from the template)."""
        text = read(script_path) or "" if script_path != "-" else ""
        out = []
        for m in _SOURCED.finditer(text):
            name = os.path.basename(m.group(1))
            if not name or "$" in name:
                continue
            for folder in dict.fromkeys((os.path.dirname(os.path.abspath(script_path)), self.root)):
                if os.path.exists(os.path.join(folder, name)):
                    break
                for suffix in _TEMPLATE_SUFFIXES:
                    if self.exists(os.path.join(folder, name + suffix)):
                        out.append(os.path.join(folder, name + suffix))
        return out

    def _inputs_of(self, path: str, pattern: re.Pattern, into: dict, text: str | None) -> None:
        for number, line in enumerate((text or "").splitlines(), start=1):
            for m in pattern.finditer(line):
                name = next(g for g in m.groups() if g)
                into.setdefault(name, f"{os.path.relpath(path, self.root)}:{number}")

    def _documents(self) -> list[str]:
        """README and docs pages: the root's README*, and the Markdown files of docs/ and of the
        root's folders one level down (an example's own README)."""
        out = []
        for folder in (self.root, os.path.join(self.root, "docs"), *self._folders(self.root)):
            for name in _listing(folder):
                if name.lower().endswith((".md", ".rst", ".txt")) and (folder != self.root or "readme" in name.lower()):
                    out.append(os.path.join(folder, name))
        return [p for p in out if os.path.isfile(p)][:_MAX_FILES]

    def _ci_files(self) -> list[str]:
        workflows = os.path.join(self.root, ".github", "workflows")
        out = [os.path.join(workflows, n) for n in _listing(workflows)]
        out += [os.path.join(self.root, n) for n in (".env", ".gitlab-ci.yml", "Dockerfile")]
        dockerfiles = [p for p in self.walk().pin_files if "dockerfile" in os.path.basename(p).lower()]
        out += [p for p in dockerfiles if p not in out and self.scope_of(p) == self.root]
        return [p for p in out if os.path.isfile(p)][:_MAX_FILES]

    def _shell_scripts(self) -> list[str]:
        """The project's shell scripts, a few folders deep (wrappers live near what they run)."""
        if self._scripts is None:
            out, stack = [], [(self.root, 0)]
            while stack and len(out) < _MAX_FILES:
                folder, depth = stack.pop()
                for name in _listing(folder):
                    path = os.path.join(folder, name)
                    if name.endswith(".sh") and os.path.isfile(path):
                        out.append(path)
                    elif depth < 4 and not name.startswith(".") and os.path.isdir(path) and not os.path.islink(path):
                        stack.append((path, depth + 1))
            self._scripts = sorted(out)
        return self._scripts

    @staticmethod
    def _folders(folder: str) -> list[str]:
        return [
            os.path.join(folder, n)
            for n in _listing(folder)
            if not n.startswith(".") and os.path.isdir(os.path.join(folder, n))
        ]

def _submodules(text: str) -> list[tuple[str, str]]:
    """(path, url) of each `[submodule ...]` section of a .gitmodules file."""
    out: list[tuple[str, str]] = []
    for section in re.split(r"^\s*\[submodule\b[^\]]*\]\s*$", text, flags=re.MULTILINE)[1:]:
        path = re.search(r"^\s*path\s*=\s*(.+?)\s*$", section, re.MULTILINE)
        url = re.search(r"^\s*url\s*=\s*(.+?)\s*$", section, re.MULTILINE)
        if path:
            out.append((path.group(1), url.group(1) if url else ""))
    return out


@dataclass
class Repositories:
    """The repositories of one run, each made once (a run checks many scripts of one project)."""

    made: dict = field(default_factory=dict)

    def of(self, script_path: str) -> Repository | None:
        root = root_of(script_path)
        if root is None:
            return None
        if root not in self.made:
            self.made[root] = Repository(root)
        return self.made[root]
