"""What a repository's files say of the verl it runs: the verl packages it holds, the folders
its setup installs with pip, the releases and git commits it pins.

Read without running anything: a bounded walk of the repository's folders (walk_repository)
finds the verl packages, the setup files (requirements files, pyproject, setup.py, setup.cfg,
REQUIRED_VERL.txt, Dockerfiles, setup scripts) and the Markdown and reStructuredText pages;
their lines are read for `pip install` of a local folder (a `cd` before it followed) and for
`verl==X`, `verl @ git+...@REF`, a clone of verl then `git checkout REF`. What a result rests on
is the digest of all of that (`statements_digest`, the store's STATEMENTS dependency), not the
pages' bytes: a page edited elsewhere re-checks nothing. Kept apart from repository.py so that
the store can work that digest out again without importing the reader of scripts.

A page's commands are those of its code: a Markdown page's fenced blocks, a reStructuredText
page's indented blocks; its prose (`install it with pip install ...` in a sentence) is not run.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

from .bounded_read import read_bounded


@dataclass(frozen=True)
class Pin:
    """A verl the project's files ask for: a release (`version`), or a git reference of verl's
    repository (`ref`: a branch, tag or commit), where it is said (`path`, `line`)."""

    path: str
    line: int
    version: str | None = None
    ref: str | None = None
    url: str | None = None  # the repository the ref is of, where the file names it

    def where(self, root: str) -> str:
        return f"{os.path.relpath(self.path, root)}:{self.line}"


# `verl==0.5.0`, `verl[vllm]==0.5.0`, `"verl==0.5.0"`: a release pinned exactly (not verl-preflight,
# not my_verl); `verl @ git+https://github.com/volcengine/verl.git@v0.5.0` and `git+...verl.git@REF`
_RELEASE = re.compile(r"(?<![\w.-])verl(?:\[[^\]\n]*\])?\s*===?\s*([0-9][0-9A-Za-z.+!-]*)")
_GIT = re.compile(r"git\+(\S*?/verl(?:\.git)?)@([\w.+/-]+)")
_CHECKOUT = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?checkout\s+([\w.+/-]+)")
_CLONE = re.compile(r"\bgit\s+clone\b[^\n]*?(\S+/verl(?:\.git)?)(?![\w-])")
_INLINE_PIN = re.compile(r"`verl(?:\[[^\]`]*\])?\s*==\s*([0-9][0-9A-Za-z.+!-]*)`")  # a code span that is the pin alone
_UV_SOURCE = re.compile(r'^\s*verl\s*=\s*\{[^}]*\bgit\s*=\s*"([^"]+)"[^}]*\}')  # [tool.uv.sources]
_UPSTREAM = re.compile(r"^\s*UPSTREAM\s*=\s*(\S+)\s*$")
_SETUP_SCRIPT = re.compile(r"(install|setup|deploy|env|requirements|docker)", re.IGNORECASE)
# verl's recipe repository: `REQUIRED_VERL.txt` beside each recipe (`TAG=v0.8.0`, `VERL_COMMIT=<sha>`,
# `ROLLING_VERL_COMMIT=`, `OPTION_A_TAG=`; its `PIP_INSTALL=` lines are read as any pip line)
REQUIRED_VERL = "REQUIRED_VERL.txt"
_REQUIRED_TAG = re.compile(r"^\s*[A-Z_]*TAG\s*=\s*v?([0-9][0-9A-Za-z.+!-]*)\s*$")
_REQUIRED_COMMIT = re.compile(r"^\s*[A-Z_]*VERL_COMMIT\s*=\s*([0-9a-f]{7,40})\s*$")

@dataclass(frozen=True)
class Install:
    """A folder the repository's setup installs with pip (`folder`, absolute; it may not be
    here), where it says so, and the folder that statement speaks for (Repository.scope_of)."""

    folder: str
    path: str
    line: int
    editable: bool
    scope: str

    def where(self, root: str) -> str:
        return f"{os.path.relpath(self.path, root)}:{self.line}"


# ---- a walk of the repository's folders -------------------------------------------------------

_WALK_DEPTH = 4  # folders below the root a walk lists
_WALK_FOLDERS = 5000  # folders a walk lists at most: past it, Walk.bounded says so
_WALK_DOCUMENTS = 400  # Markdown pages read at most
_NOT_WALKED = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env", "wandb"})
_PIN_FILES = ("pyproject.toml", "setup.py", "setup.cfg", REQUIRED_VERL)
_DOC_FOLDERS = frozenset({"docs", "doc", "scripts", "script", "docker", "assets", ".github"})


@dataclass(frozen=True)
class Walk:
    """What the folders of a repository hold that tells of its verl: each `verl` package
    (a folder `verl` with `__init__.py` and `trainer/`, below which nothing more is walked),
    the files that install or pin packages (requirements files, pyproject, setup.py,
    setup.cfg, REQUIRED_VERL.txt, Dockerfiles, setup scripts) and the Markdown and
    reStructuredText pages, and why the walk stopped early (None: it did not)."""

    packages: tuple = ()
    pin_files: tuple = ()
    documents: tuple = ()
    bounded: str | None = None

    @property
    def digest(self) -> str:
        """What the walk found, as one digest: a verl package or a setup file that appears or
        goes changes it (a result that rests on the walk is made again)."""
        text = "\0".join((*self.packages, "", *self.pin_files, "", *self.documents, "", self.bounded or ""))
        return hashlib.sha256(text.encode()).hexdigest()


def names_verl(text: str) -> bool:
    """Whether a path or URL names verl (`verl/`, `.../verl.git`; not verl-agent, my_verl)."""
    return re.search(r"(?<![\w-])verl(?![\w-])", text) is not None


def _is_pin_file(name: str) -> bool:
    low = name.lower()
    return (
        name in _PIN_FILES
        or low.startswith("requirements") and low.endswith(".txt")
        or low.startswith("dockerfile")
        or low.endswith(".dockerfile")
        or low.endswith(".sh") and _SETUP_SCRIPT.search(name) is not None
    )


def walk_repository(root: str) -> Walk:
    """The folders of `root`, _WALK_DEPTH deep, breadth first and sorted (hidden folders but
    .github, links to folders and _NOT_WALKED left out), at most _WALK_FOLDERS of them: see Walk.
    A folder holding a verl package is not walked further (its own pages are verl's, not the
    project's), the root excepted (a fork of verl kept whole)."""
    packages, pins, docs = [], [], []
    queue, listed, bounded = [(root, 0)], 0, None
    while queue:
        folder, depth = queue.pop(0)
        if listed >= _WALK_FOLDERS:
            bounded = f"the walk of the repository's folders stopped after {_WALK_FOLDERS} folders"
            break
        listed += 1
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        below, files = [], []
        holds = False
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError:
                continue
            if is_file:
                files.append(entry)
            elif is_dir and entry.name == "verl" and os.path.isfile(os.path.join(entry.path, "__init__.py")):
                if os.path.isdir(os.path.join(entry.path, "trainer")):
                    packages.append(entry.path)
                    holds = True
            elif is_dir and depth < _WALK_DEPTH and entry.name not in _NOT_WALKED:
                if not entry.name.startswith(".") or entry.name == ".github":
                    below.append(entry.path)
        if holds and folder != root:
            continue  # a checkout of verl: its pages and setup are verl's own
        for entry in files:
            if _is_pin_file(entry.name):
                pins.append(entry.path)
            elif entry.name.lower().endswith((".md", ".rst")) and len(docs) < _WALK_DOCUMENTS:
                docs.append(entry.path)
        queue.extend((b, depth + 1) for b in below)
    return Walk(tuple(packages), tuple(pins), tuple(docs), bounded)


def _page(path: str) -> str:
    """A setup file or page as text ('' where it cannot be read or is past the bounded reader's
    8 MB): read for its install and pin lines only, which statements_digest stands for."""
    data = read_bounded(path)
    return data.decode("utf-8", "replace") if data is not None else ""


@dataclass(frozen=True)
class Statements:
    """What the setup files and pages of a repository say (walk_repository finds them), each file
    read once: the folders they install with pip, the verls they pin, the scripts they run, and
    the digest of all of it with the walk's (what STATEMENTS + root stands for)."""

    installs: tuple = ()
    pins: tuple = ()
    runs: tuple = ()
    digest: str = ""


def statements(root: str, walk: Walk | None = None) -> Statements:
    """The Statements of the repository at `root` (its walk, or `walk` where already made)."""
    walk = walk if walk is not None else walk_repository(root)
    installs, pins, runs = [], [], []
    own = _own_names(root)
    for path in (*walk.pin_files, *walk.documents):
        text = _page(path)
        found_installs, found_runs = _commands_in(text, path, root, own)
        installs += found_installs
        runs += found_runs
        pins += _pins_in(text, path)
    h = hashlib.sha256(walk.digest.encode())
    for record in (*installs, *pins, *runs):
        h.update(f"{record}\0".encode())
    return Statements(tuple(installs), tuple(pins), tuple(runs), h.hexdigest())


def statements_digest(root: str) -> str:
    """The digest of what a repository says of its verl, now (the store's STATEMENTS dependency)."""
    return statements(root).digest


def scope_of(path: str, root: str) -> str:
    """Repository.scope_of."""
    folder = os.path.dirname(os.path.abspath(path))
    rel = os.path.relpath(folder, root).split(os.sep)
    for i, part in enumerate(rel):
        if part in _DOC_FOLDERS:
            return os.path.normpath(os.path.join(root, *rel[:i]))
    return folder


# ---- install and pin lines ----------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
_PROMPT = re.compile(r"^\s*(?:[$>#]\s+|RUN\s+)")  # a page's `$ ` or `# ` prompt, a Dockerfile's RUN in it
_RUN = re.compile(r"^\s*RUN\s+")  # a Dockerfile's RUN
_PIP_INSTALL = re.compile(r"\b(?:uv\s+)?pip3?\s+install\b|\bpython3?\s+-m\s+pip\s+install\b")
_CD = re.compile(r"^cd\s+(\S+)$")
_PATH = re.compile(r"[\w.+/-]+")  # a folder named plainly (no variable, URL or glob)


def _commands(line: str, page: bool) -> list[str]:
    """The commands of a line of shell (split at `&&`, `||`, `;`): a page's prompt (`$ `, `# `)
    taken off; a setup file's comment line is none."""
    if not page and line.lstrip().startswith("#"):
        return []
    line = line.split(" #", 1)[0].replace("`", " ")
    line = (_PROMPT.sub("", line) if page else _RUN.sub("", line)).strip().rstrip("\\").strip()
    return [c.strip() for c in re.split(r"&&|\|\||;", line) if c.strip()]


def _local_targets(command: str) -> list[tuple[str, bool]]:
    """(path, editable) of each local folder a pip install command names: `-e PATH`,
    `--editable PATH`, `-e PATH[extra]`, and a plain `PATH` that is a path (`.`, `./x`, `x/`)."""
    m = _PIP_INSTALL.search(command)
    if m is None:
        return []
    words = command[m.end() :].split()
    out, i = [], 0
    while i < len(words):
        w = words[i].strip("'\"")
        if w in ("-e", "--editable") and i + 1 < len(words):
            out.append((words[i + 1].strip("'\"").split("[", 1)[0], True))
            i += 2
            continue
        if w.startswith("--editable="):
            out.append((w.split("=", 1)[1].split("[", 1)[0], True))
        elif not w.startswith("-"):
            path = w.split("[", 1)[0]
            if path in (".", "..") or path.startswith(("./", "../")) or path.endswith("/") and "://" not in path:
                out.append((path, False))
        elif w in ("-r", "-c", "--requirement", "--constraint", "-i", "--index-url", "--extra-index-url", "-f"):
            i += 1
        i += 1
    return [(p, e) for p, e in out if _PATH.fullmatch(p)]


def _code_lines(text: str, path: str):
    """(line number, line, whether a new block of commands starts there) of the lines of a file
    that are commands: every line of a setup file (each its own block in REQUIRED_VERL.txt, whose
    lines are KEY=value), the fenced blocks of a Markdown page, the indented blocks after `::` of
    a reStructuredText page."""
    name = os.path.basename(path)
    if _is_pin_file(name):
        for number, line in enumerate(text.splitlines(), start=1):
            yield number, line, name == REQUIRED_VERL
        return
    rst = name.lower().endswith(".rst")
    inside, fresh = False, False
    for number, line in enumerate(text.splitlines(), start=1):
        if not rst:
            if _FENCE.match(line):
                inside, fresh = not inside, True
                continue
        elif line.rstrip().endswith("::"):
            inside, fresh = True, True
            continue
        elif inside and line.strip() and not line[:1].isspace():
            inside = False
        if inside:
            yield number, line, fresh
            fresh = False


@dataclass(frozen=True)
class Run:
    """A page or setup script that runs a script of the repository (`cd exp_scripts && bash
    train.sh`): the script as named, the folder it is run from (relative to the folder the
    commands start in, `scope`; None: a `cd` not followed), where it says so."""

    script: str
    cwd: str | None
    path: str
    line: int
    scope: str

    def where(self, root: str) -> str:
        return f"{os.path.relpath(self.path, root)}:{self.line}"


_RUNS_SCRIPT = re.compile(r"^(?:nohup\s+|time\s+)?(?:(?:bash|sh)\s+(?:-\w+\s+)*|\./)([\w./-]+\.sh)\b")


def _commands_in(text: str, path: str, root: str, own: set) -> tuple[list[Install], list[Run]]:
    """The pip installs of local folders and the runs of shell scripts in one file's code, a
    `cd` before each followed from the folder the commands start in (the file's `scope`): a
    `git clone` of this repository (`own`: the names it goes by) then `cd` into it is its root."""
    scope = scope_of(path, root)
    page = not _is_pin_file(os.path.basename(path))
    installs: list[Install] = []
    runs: list[Run] = []
    cwd: str | None = ""  # relative to the scope; None: a `cd` not followed
    clones: dict = {}  # the folder a `git clone` before made -> whether it is this repository
    for number, line, fresh in _code_lines(text, path):
        if fresh:
            cwd, clones = "", {}
        for command in _commands(line, page):
            clone = _GIT_CLONE.match(command)
            if clone:
                clones[clone.group(2) or _repo_name(clone.group(1))] = _repo_name(clone.group(1)) in own
                continue
            cd = _CD.match(command)
            if cd:
                cwd = _cd(cwd, cd.group(1).strip("'\""), clones)
                continue
            run = _RUNS_SCRIPT.match(command)
            if run:
                runs.append(Run(run.group(1), os.path.normpath(cwd) if cwd is not None else None, path, number, scope))
            for target, editable in _local_targets(command):
                if cwd is None or os.path.isabs(target):
                    continue
                rel = os.path.normpath(os.path.join(cwd, target))
                here = [os.path.normpath(os.path.join(b, rel)) for b in (scope, root)]
                folder = next((f for f in here if os.path.isdir(f)), here[0])
                if folder == root or folder.startswith(root + os.sep):
                    installs.append(Install(folder, path, number, editable, scope))
    return installs, runs


def _cd(cwd: str | None, target: str, clones: dict) -> str | None:
    """Where `cd target` leads from `cwd` (relative to the scope; None: not followed): into the
    clone of this repository a block made, its root."""
    first, _, rest = target.partition("/")
    if cwd == "" and clones.get(first):
        return rest
    if cwd is None or "$" in target or target.startswith(("/", "~")):
        return None
    return os.path.join(cwd, target)


_GIT_CLONE = re.compile(r"^git\s+clone\s+(?:-\S+\s+(?:\S+\s+)?)*?(\S+?)(?:\s+([\w.-]+))?\s*$")


def _repo_name(url: str) -> str:
    """The folder `git clone URL` makes: the URL's last part without `.git`."""
    name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name[: -len(".git")] if name.endswith(".git") else name


def _own_names(root: str) -> set:
    """The names this repository goes by: its folder's, and the one its `origin` remote's URL
    ends in (`.git/config`, as `git clone` writes it)."""
    names = {os.path.basename(root)}
    data = read_bounded(os.path.join(root, ".git", "config"), 1 << 16)
    if data is not None:
        for m in re.finditer(r"^\s*url\s*=\s*(\S+)", data.decode("utf-8", "replace"), re.M):
            names.add(_repo_name(m.group(1)))
    return names


def _pins_in(text: str, path: str) -> list[Pin]:
    """The verl releases and git references one file asks for (Repository.pins)."""
    name = os.path.basename(path)
    page = not _is_pin_file(name)
    out: list[Pin] = []
    cloned = None  # the URL of verl's repository a `git clone` before took
    upstream = None  # REQUIRED_VERL.txt's UPSTREAM=
    for number, line, fresh in _code_lines(text, path):
        if fresh and name != REQUIRED_VERL:
            cloned = None
        code = line.split("#", 1)[0] if not path.endswith(".toml") and name != REQUIRED_VERL else line
        if name == REQUIRED_VERL and re.match(r"\s*[A-Z_]*(?:NOTE|REFRESH)", line):
            continue  # (prose about the pins, not a pin: `NOTES=... may list verl==0.7.0.dev0`)
        if page and not _PIP_INSTALL.search(code) and "git " not in code:
            continue
        if re.search(r"\bgit\s+clone\b", code):  # the repository a `git checkout` after it is in
            clone = _CLONE.search(code)
            cloned = _url(clone.group(1)) if clone else None
        for m in _RELEASE.finditer(code):
            out.append(Pin(path, number, version=m.group(1)))
        for m in _GIT.finditer(code):
            out.append(Pin(path, number, ref=m.group(2), url=_url(m.group(1))))
        m = _CHECKOUT.search(code)
        if cloned and m:
            out.append(Pin(path, number, ref=m.group(1), url=cloned))
        uv = _UV_SOURCE.match(line) if name == "pyproject.toml" else None
        if uv:  # [tool.uv.sources] verl = { git = "URL", rev|branch|tag = "REF" }
            ref = re.search(r'\b(?:rev|tag|branch)\s*=\s*"([^"]+)"', uv.group(0))
            out.append(Pin(path, number, ref=ref.group(1) if ref else "the default branch", url=_url(uv.group(1))))
        if name == REQUIRED_VERL:
            tag, commit, up = _REQUIRED_TAG.match(line), _REQUIRED_COMMIT.match(line), _UPSTREAM.match(line)
            if up:
                upstream = _url(up.group(1))
            if tag:
                out.append(Pin(path, number, version=tag.group(1)))
            if commit:
                out.append(Pin(path, number, ref=commit.group(1), url=upstream))
    if page and name.lower().startswith("readme"):  # a README's prose that names the pin alone as code:
        for number, line in enumerate(text.splitlines(), start=1):  # `verl==0.7.0` (AgentR1/Agent-R1)
            for m in _INLINE_PIN.finditer(line):
                out.append(Pin(path, number, version=m.group(1)))
    return out


def _url(text: str) -> str | None:
    """A repository's URL as git fetches it (`https://...`, `git@host:...`, `ssh://...`); None
    for anything else (a variable, a local path)."""
    text = text.strip("'\"")
    return text if re.match(r"(?:https?|ssh|git)://|git@[\w.-]+:", text) and "$" not in text else None


