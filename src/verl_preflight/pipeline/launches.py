"""Launch sites: which commands start a verl entry point, and what they pass it.

A launch is `python[3] [-u ...] -m verl.<module> ARGS`, possibly behind a
wrapper (`uv run`, `torchrun`, `ray job submit ... --`, `nohup`, an array such
as `"${LAUNCH[@]}"`). ARGS are Hydra's: `--config-path`/`-cp`,
`--config-name`/`-cn`, `--config-dir`/`-cd`, and overrides in order, each with
the location of the word it came from.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..core.values import Loc
from ..hydra_stage.problems import HydraKind, LaunchProblem
from ..hydra_stage.tree import in_verl
from ..shell.directory import joined, start_directory
from ..shell.words import Field, join_pieces

_PYTHON = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|torchrun)$")


def _runs_python(text: str) -> bool:
    """`python3`, `/usr/bin/python3.11`, `torchrun`: a word that starts Python (asked of every
    word of every command a script runs: the substrings first, the name's pattern only then)."""
    return ("py" in text or "torchrun" in text) and _PYTHON.match(os.path.basename(text)) is not None


_NOT_LAUNCHERS = {
    "echo",
    "printf",
    ":",
    "true",
    "false",
    "test",
    "[",
    "export",
    "local",
    "declare",
    "readonly",
    "typeset",
    "unset",
    "eval",
    "alias",
    "exit",
    "return",
}
_PY_OPTS_WITH_ARG = {"-W", "-X", "-c", "-Q"}
_HYDRA_FLAGS_WITH_ARG = {
    "--config-path",
    "-cp",
    "--config-name",
    "-cn",
    "--config-dir",
    "-cd",
    "--experimental-rerun",
    "--info",
    "-i",
}
_HYDRA_FLAGS = {
    "--help",
    "-h",
    "--hydra-help",
    "--version",
    "--cfg",
    "-c",
    "--resolve",
    "--package",
    "-p",
    "--run",
    "-r",
    "--multirun",
    "-m",
    "--shell-completion",
    "-sc",
}


def find_entry(argv: list[Field], project_entry=None) -> int | None:
    """Index of the entry module's word in argv (a verl module, or, where `project_entry(name)`
    says so, a module or Python file of the script's project that runs a Hydra app: `python3 -m
    myproj.main_ppo`, `python train.py`), or None if this is not such a launch."""
    if not argv:
        return None
    first = argv[0].value
    if first in _NOT_LAUNCHERS:
        return None
    saw_launcher = False
    python_at = None  # the word that starts Python
    for i, f in enumerate(argv):
        text = f.value
        if text is None:
            saw_launcher = saw_launcher or i == 0
            continue
        if _runs_python(text) or text == "run" and i > 0 and os.path.basename(argv[i - 1].value or "") == "uv":
            saw_launcher, python_at = True, i  # (`uv run -m X`, `uv run x.py`: uv starts Python itself)
            continue
        if not saw_launcher:
            continue
        if text == "-m" and i + 1 < len(argv):
            mod = argv[i + 1].value
            if mod is not None and _is_entry(mod, project_entry):
                return i + 1
        if text.startswith("-m") and _is_entry(text[2:], project_entry):
            return i
        if python_at is not None and text.endswith(".py") and not text.startswith("-"):
            # `python [options] train.py ARGS`: the first word that is not an option is the program
            if project_entry is not None and _program_at(argv, python_at) == i and project_entry(text):
                return i
    return None


def _is_entry(module: str, project_entry) -> bool:
    """A module `python3 -m` runs as a launch: a Hydra app of the project's (`project_entry`:
    True), not a module of the project's that is none (False: an argparse program of a recipe
    tree, `recipe.r1.data_process`), else a module of verl's."""
    own = project_entry(module) if project_entry is not None and module else None
    return own if own is not None else in_verl(module) is not None


def _program_at(argv: list[Field], python_at: int) -> int | None:
    """The index of the program Python runs: the first word after its options (and their values)."""
    i = python_at + 1
    while i < len(argv):
        text = argv[i].value
        if text is None or not text.startswith("-") or text == "-":
            return i
        i += 2 if text in _PY_OPTS_WITH_ARG else 1
    return None


@dataclass
class Launch:
    """A command the script runs that starts a verl entry point."""

    loc: Loc
    argv: list  # list[Field]
    entry: int  # index of the module name in argv
    last_word: str = ""  # source text of the command's last word (is it "$@"?)
    env: dict = field(default_factory=dict)  # the exported variables the command gets: name -> Field


def launch_of(argv: list[Field], loc: Loc, last_word: str = "", environment=None, project_entry=None):
    """The shell's command callback: a Launch when the command starts verl or a Hydra app of the
    script's project (`project_entry`, find_entry), else None. `environment()` gives the
    variables the command gets (asked only for a launch)."""
    entry = find_entry(argv, project_entry)
    if entry is None:
        return None
    return Launch(loc, argv, entry, last_word, launch_environment(argv, environment, entry))


def launch_environment(argv: list[Field], environment=None, upto: int | None = None) -> dict:
    """The environment the program a command starts gets (name -> Field): the exported variables
    (`environment()`), changed by the words before it (`env X=1`, `env -C DIR`, `sudo`, `ray job
    submit --working-dir DIR`); PWD is where it runs (shell.directory). `upto`: the program's
    word (default: the first that starts Python)."""
    if upto is None:
        upto = next((i for i, f in enumerate(argv) if f.value is not None and _runs_python(f.value)), len(argv))
    env = dict(environment()) if environment is not None else {}
    return _ray_working_dir(argv[:upto], _env_commands(argv[:upto], env))


def _ray_working_dir(words: list[Field], env: dict) -> dict:
    """`ray job submit --working-dir DIR -- python3 -m X` (or `--runtime-env-json` with a
    `working_dir`): Ray runs the entrypoint in that folder (its copy of it), so it is the
    launch's working directory (PWD), from where `ray job submit` ran."""
    values = [f.value for f in words]
    if "ray" not in {os.path.basename(v) for v in values if v} or "submit" not in values:
        return env
    folder = None
    for i, f in enumerate(words):
        head = f.pieces[0] if f.pieces and isinstance(f.pieces[0], str) else ""
        if f.value == "--working-dir" and i + 1 < len(words):
            folder = words[i + 1]
        elif head.startswith("--working-dir="):
            folder = _after_equals(f)
        elif f.value in ("--runtime-env-json",) and i + 1 < len(words) and words[i + 1].value:
            folder = _json_working_dir(words[i + 1]) or folder
        elif head.startswith("--runtime-env-json=") and f.value:
            folder = _json_working_dir(_after_equals(f)) or folder
    if folder is None:
        return env
    return {**env, "PWD": joined(env.get("PWD") or start_directory(), folder)}


def _json_working_dir(word: Field) -> Field | None:
    import json

    try:
        data = json.loads(word.value or "")
    except ValueError:
        return None
    found = data.get("working_dir") if isinstance(data, dict) else None
    return Field.of(found, word.loc) if isinstance(found, str) and found else None


def other_program(argv: list[Field], project_entry=None) -> str | None:
    """A command that runs Python (python3, torchrun) but no verl entry point nor Hydra app of
    the project: its first two words, as said in a note (`python3 my_app.py`); None for anything else."""
    for i, f in enumerate(argv):
        text = f.value
        if text is not None and _runs_python(text):
            return " ".join(w.display for w in argv[i : i + 2]) if find_entry(argv, project_entry) is None else None
    return None


_SHELLS = ("bash", "sh", "zsh")


def wrapped_script(argv: list[Field], script_dir: str) -> tuple[str, bool] | None:
    """A command that runs another shell script (`bash tests/run_x.sh`): its first two words, as
    said in a note, and whether the file is here (from the working directory or beside the
    script: the evaluator follows it then); None for anything else (`bash -c ...` included)."""
    if not argv or argv[0].value is None or os.path.basename(argv[0].value) not in _SHELLS:
        return None
    words = [f.value for f in argv[1:]]
    target = next((w for w in words if w is not None and not w.startswith("-")), None)
    if "-c" in words or target is None or not target.endswith(".sh"):
        return None
    from ..core.repository import root_of

    root = root_of(script_dir)
    places = (target, os.path.join(script_dir, target), *([os.path.join(root, target)] if root else []))
    here = any(os.path.isfile(p) for p in places)
    return f"{argv[0].display} {target}", here


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _env_commands(words: list[Field], env: dict) -> dict:
    """The environment after each `env` among the words before the module (`env -u X`, `env -i`,
    `env X=1 python3 ...`): what coreutils env gives the command it runs. Its operands are read
    up to the command; a word known only at run time ends them (it could be either)."""
    out = dict(env)
    i = 0
    while i < len(words):
        i += 1
        program = os.path.basename(words[i - 1].value or "")
        if program == "sudo":
            i, out = _sudo_operands(words, i, out)
            continue
        if program != "env":
            continue
        while i < len(words) and words[i].pieces and isinstance(words[i].pieces[0], str):
            w, head = words[i].value, words[i].pieces[0]
            if w in ("-i", "--ignore-environment", "-"):
                out = {}
            elif w in ("-u", "--unset", "-C", "--chdir"):
                if w in ("-u", "--unset") and i + 1 < len(words) and words[i + 1].value:
                    out.pop(words[i + 1].value, None)
                elif i + 1 < len(words):  # `env -C DIR`: the command runs in DIR
                    out["PWD"] = joined(out.get("PWD") or start_directory(), words[i + 1])
                i += 1
            elif w is not None and w.startswith("--chdir="):
                out["PWD"] = joined(out.get("PWD") or start_directory(), _after_equals(words[i]))
            elif w is not None and w.startswith(("--unset=", "-u")):
                out.pop(w.split("=", 1)[1] if w.startswith("--") else w[2:], None)
            elif head.startswith("-"):
                pass  # -0, -v, --chdir=DIR, ...: nothing the command's environment gets
            elif not _set_operand(words[i], out):
                break  # the command env runs
            i += 1
    return out


_SUDO_TAKES_VALUE = {"-u", "-g", "-h", "-p", "-C", "-D", "-R", "-r", "-t", "-T", "-U", "--user", "--group"}


def _sudo_operands(words: list[Field], i: int, env: dict) -> tuple[int, dict]:
    """`sudo [options] [NAME=value...] command`: sudo resets the environment (env_reset;
    which variables sudoers keeps is not known here, so none is), unless -E/--preserve-env;
    NAME=value operands are set for the command."""
    out = {} if not any(w.value in ("-E", "--preserve-env") for w in words[i:]) else dict(env)
    while i < len(words) and words[i].pieces and isinstance(words[i].pieces[0], str):
        w, head = words[i].value, words[i].pieces[0]
        if w in _SUDO_TAKES_VALUE:
            i += 1
        elif head.startswith("-"):
            pass
        elif not _set_operand(words[i], out):
            break  # the command sudo runs
        i += 1
    return i, out


def _set_operand(word: Field, env: dict) -> bool:
    """A `NAME=value` operand of env or sudo: set in `env`; False for any other word."""
    name, eq, rest = word.pieces[0].partition("=")
    if not eq or not _NAME.match(name):
        return False
    env[name] = Field(join_pieces((rest, *word.pieces[1:])), word.loc)
    return True


@dataclass
class Override:
    """One Hydra override of a launch: its text, where the script wrote it, the word it is."""

    text: str
    loc: Loc
    field: Field

    @property
    def known(self) -> bool:
        return self.field.known

    @property
    def display(self) -> str:
        """The argument as the script wrote it (unknown parts as their source)."""
        return self.field.display

    @property
    def key(self) -> str | None:
        """The key it names (without `+`, `++`, `~`), when the script wrote it literally."""
        head = self.field.pieces[0] if self.field.pieces else ""
        if not isinstance(head, str) or (self.field.known is False and "=" not in head and not head.startswith("~")):
            return None
        return head.split("=", 1)[0].lstrip("+~") or None


@dataclass
class LaunchSpec:
    loc: Loc
    module: str
    config_path: str | None
    config_name: str | None
    overrides: list[Override] = field(default_factory=list)
    problems: list = field(default_factory=list)  # hydra_stage.problems.LaunchProblem
    unknown: list[Override] = field(default_factory=list)  # arguments with unknown text
    config_name_loc: Loc | None = None
    config_path_loc: Loc | None = None
    config_path_field: Field | None = None  # --config-path as the script wrote it (unknown pieces kept)
    config_dirs: list = field(default_factory=list)  # --config-dir values: (text or None, Field, Loc)
    trains: bool = True  # False after a Hydra flag such as --cfg or --help: nothing to check
    argv: list = field(default_factory=list)  # every word bash passes, launcher first (list[Field])
    entry: int = 0  # index of the module word in argv
    env: dict = field(default_factory=dict)  # the exported variables at the launch: name -> Field
    # a module or file of the script's project, not verl's: the Hydra app it runs
    # (sources.hydra_app.HydraApp), set by the pipeline; None for verl's own modules
    app: object = None


def _after_equals(f: Field) -> Field:
    """`--flag=VALUE` as a Field of VALUE alone (unknown pieces kept)."""
    pieces = list(f.pieces)
    head = pieces[0] if pieces and isinstance(pieces[0], str) else ""
    pieces[0:1] = [head.partition("=")[2]] if "=" in head else []
    return Field(join_pieces(tuple(pieces)), f.loc)


def read_launch(launch) -> LaunchSpec:
    argv = launch.argv
    entry = launch.entry
    mod_field = argv[entry]
    module = (
        mod_field.value[2:]
        if mod_field.value.startswith("-m") and entry > 0 and argv[entry - 1].value != "-m"
        else mod_field.value
    )
    spec = LaunchSpec(launch.loc, module, None, None, argv=list(argv), entry=entry, env=dict(launch.env))
    args = argv[entry + 1 :]
    i = 0
    while i < len(args):
        f = args[i]
        loc = f.loc or launch.loc
        text = f.value
        head = f.pieces[0] if f.pieces and isinstance(f.pieces[0], str) else ""
        if text is None and head.partition("=")[0] in _HYDRA_FLAGS_WITH_ARG and "=" in head:
            text = head  # `--config-path=$(pwd)/x`: the flag, with a value known only at run time
        if text is None:
            spec.unknown.append(Override(f.display, loc, f))
            spec.overrides.append(Override(f.display, loc, f))
            i += 1
            continue
        if (
            text.startswith("-")
            and not text.startswith("--")
            and len(text) > 1
            and text[1:2].isalpha()
            or text.startswith("--")
        ):
            name, eq, val = text.partition("=")
            if name in _HYDRA_FLAGS_WITH_ARG:
                val_field = _after_equals(f) if eq else None
                if val_field is not None:
                    val = val_field.value
                if not eq:
                    if i + 1 >= len(args):
                        spec.problems.append(LaunchProblem(HydraKind.ARGUMENT, loc, f"{name} needs a value"))
                        break
                    val_field = args[i + 1]
                    val = val_field.value if val_field.value is not None else None
                    i += 1
                if name in ("--config-path", "-cp"):
                    spec.config_path, spec.config_path_loc, spec.config_path_field = val, loc, val_field
                elif name in ("--config-name", "-cn"):
                    spec.config_name, spec.config_name_loc = val, loc
                elif name in ("--config-dir", "-cd"):
                    spec.config_dirs.append((val, val_field, loc))
                i += 1
                continue
            if name in _HYDRA_FLAGS:
                message = f"Hydra flag {name} changes what the launch does; the config is not checked past it"
                spec.problems.append(LaunchProblem(HydraKind.FLAG, loc, message))
                spec.trains = False
                break
            message = f"'{text}' is not a Hydra option: main_ppo will refuse it (unrecognized arguments)"
            spec.problems.append(LaunchProblem(HydraKind.ARGUMENT, loc, message))
            i += 1
            continue
        spec.overrides.append(Override(text, loc, f))
        i += 1
    return spec


def collapse_key(launch, outcome) -> tuple:
    """What of a launch tells two profiles apart (shell.profiles.collapse): what verl receives
    (module, arguments and the known values of the variables the script exports to it, from where
    each came); the launcher in front (`uv run python3`, `python3`) and variables that come from
    the profile itself are not part of it."""
    exported = tuple(
        sorted(
            (k, f.pieces, f.loc)
            for k, f in getattr(launch, "env", {}).items()
            # a switch is the profile itself; a value known only at run time is judged by no rule
            if f.loc is not None and k not in outcome.env and f.known
        )
    )
    return launch.loc, tuple((f.pieces, f.loc) for f in launch.argv[launch.entry :]), exported
