"""The abstract bash interpreter: one state per profile, forks on the unknown.

It walks the tree-sitter syntax tree the way bash would run the script, but
never executes anything: external commands have an unknown exit status,
command substitution yields an unknown value, `eval` is not followed, and
`source` only reads a file that exists. Conditions on unknown values fork the
state; each end state records its assumptions, its launches and its notes.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..core.script_reader import reader
from ..core.values import OTHER, Assumption, Profile
from .assign import Variables
from .builtins import BUILTINS, Builtins, Declarations
from .commands import Commands
from .conditions import TestCommands
from .directory import WorkingDirectory
from .errors import ArithFailure
from .expand import Expander
from .flow import Cases, ControlFlow, Loops
from .limits import metering
from .notes import Note, NoteKind
from .parse import Script, parse_script
from .profiles import other_exclusions, scan
from .state import Allowance, Budget, State, Var
from .words import Field, Unknown

ALWAYS_SET = frozenset(
    {
        "HOME",
        "PATH",
        "PWD",
        "USER",
        "SHELL",
        "HOSTNAME",
        "LANG",
        "TERM",
        "LOGNAME",
        "SHLVL",
        "OLDPWD",
        "UID",
        "EUID",
        "BASH",
        "BASH_VERSION",
        "HOSTTYPE",
        "OSTYPE",
        "MACHTYPE",
        "IFS",
        "PPID",
        "RANDOM",
        "SECONDS",
        # set by bash itself in every script (bash 5.2, `set -u`: expanding each is no error);
        # FUNCNAME is not among them (unbound outside a function)
        "PIPESTATUS",
        "LINENO",
        "BASHPID",
        "BASH_SUBSHELL",
        "BASH_SOURCE",
        "BASH_LINENO",
        "BASH_ARGV0",
        "BASH_COMMAND",
        "BASH_VERSINFO",
        "BASHOPTS",
        "SHELLOPTS",
        "OPTIND",
        "OPTERR",
        "EPOCHSECONDS",
        "EPOCHREALTIME",
        "SRANDOM",
        "GROUPS",
        "DIRSTACK",
        "HISTCMD",
        "PS4",
    }
)


# What Slurm sets in every batch job's environment (sbatch(1), OUTPUT ENVIRONMENT VARIABLES):
# a script with #SBATCH directives runs under sbatch, so `set -u` never stops on these.
SLURM_BATCH = frozenset(
    {
        "SLURM_JOB_ID",
        "SLURM_JOBID",
        "SLURM_JOB_NAME",
        "SLURM_JOB_NODELIST",
        "SLURM_NODELIST",
        "SLURM_JOB_NUM_NODES",
        "SLURM_NNODES",
        "SLURM_SUBMIT_DIR",
        "SLURM_SUBMIT_HOST",
        "SLURM_CLUSTER_NAME",
        "SLURM_JOB_PARTITION",
        "SLURM_CPUS_ON_NODE",
        "SLURM_JOB_CPUS_PER_NODE",
        "SLURM_NODEID",
        "SLURM_PROCID",
        "SLURM_LOCALID",
        "SLURM_TASK_PID",
        "SLURMD_NODENAME",
    }
)


# and what sbatch sets when a directive asks for it
SLURM_BY_DIRECTIVE = {
    "--gpus-per-node": "SLURM_GPUS_PER_NODE",
    "--ntasks-per-node": "SLURM_NTASKS_PER_NODE",
    "--ntasks": "SLURM_NTASKS",
    "--cpus-per-task": "SLURM_CPUS_PER_TASK",
    "--gpus": "SLURM_GPUS",
}


# a batch job given GPUs (its GRES): Slurm sets CUDA_VISIBLE_DEVICES to them in the job's environment
SLURM_GPU_DIRECTIVES = ("--gres=gpu", "--gres gpu", "--gpus", "-G ")  # (--gpus: --gpus-per-node, -per-task too)


def set_by_environment(script: Script) -> frozenset:
    """The variables bash is sure to have when this script runs: bash's own, and Slurm's for
    a batch script (one with #SBATCH directives)."""
    directives = [ln for ln in script.source.splitlines()[:200] if ln.startswith(b"#SBATCH")]
    if not directives:
        return ALWAYS_SET
    text = b"\n".join(directives).decode("utf-8", "replace")
    asked = {name for option, name in SLURM_BY_DIRECTIVE.items() if f"{option}=" in text or f"{option} " in text}
    if any(option in text for option in SLURM_GPU_DIRECTIVES):
        asked.add("CUDA_VISIBLE_DEVICES")
    return ALWAYS_SET | SLURM_BATCH | asked


@dataclass
class Outcome:
    """One end state: the profile env, forks' assumptions, status, launches, notes."""

    env: dict
    assumptions: tuple
    status: str
    exit_code: int | None
    launches: list
    notes: list = field(default_factory=list)
    ended: tuple | None = None  # where it exits, when it does: (Loc, why, (function, Loc of its call) or None)
    secrets: frozenset = frozenset()  # values of secret-named variables at the end (secret_values)

    @property
    def profile(self) -> Profile:
        return Profile.of(self.env, self.assumptions)


class Context:
    """What one evaluation of a script knows about its environment."""

    def __init__(
        self, script_name: str, unset_inputs, ambient: dict | None, allowance: Allowance, on_command, read_file
    ):
        self.script_name = script_name
        self.unset_inputs = set(unset_inputs)
        self.ambient = ambient
        self.allowance = allowance  # the script's steps and time, shared by its profiles
        self.budget = allowance.budget
        self.on_command = on_command  # (argv, loc, last_word, environment) -> a launch record, or None
        self.always_set = ALWAYS_SET
        self.read_file = read_file  # path -> bytes | None (the pipeline's one reader)
        self.parsed: dict[str, Script] = {}
        self.main_path: str | None = None  # the file of the script evaluated (not a sourced one)
        self.running: list[str] = []  # scripts that started the one evaluated now (bash FILE)
        self.wrapped_runs = 0
        self.switches = None  # profiles.Scan of the script, when the caller has it
        self.main_script: Script | None = None  # the file evaluated, parsed
        self.forwarding = False  # an eval runs text that ends with the script's arguments

    def missing(self, name: str) -> Field | None:
        """The value of a variable nobody set: unset (None) or unknown from the environment."""
        if self.ambient is not None or name in self.unset_inputs:
            return None
        if not (name[:1].isalpha() or name[:1] == "_"):
            return None
        return Field((Unknown("${" + name + "}", f"environment variable {name}"),))

    def leave_unset(self, script: Script) -> None:
        """A script started as a program (`exec bash other.sh`) reads its own inputs: in a profile,
        as in the main script, one read with a default (`${TRAIN_FILES:-...}`) and not passed to it
        is unset, so the default applies (under --profile current the real environment decides)."""
        if self.ambient is None:
            self.unset_inputs |= scan(script, read_file=self.read_file).inputs

    def load(self, path: str) -> Script | None:
        """The parsed file at `path` (read once, shared across profiles); None if unreadable."""
        script = self.parsed.get(path)
        if script is None:
            data = self.read_file(path)
            if data is None:
                return None
            script = self.parsed[path] = parse_script(path, data)
        return script

    @contextmanager
    def program(self, path: str):
        """While a script started as a program (`bash FILE`) runs: $0 and the main file are its."""
        saved = self.script_name, self.main_path
        self.running.append(os.path.abspath(saved[1] or ""))
        self.script_name, self.main_path = path, path
        try:
            yield
        finally:
            self.script_name, self.main_path = saved
            self.running.pop()


class Interpreter:
    """The composition root: the current file, the evaluation context and notes, and
    the parts that read each kind of node. It is the expansion's host (ExpansionHost)."""

    def __init__(self, script: Script, ctx: Context):
        self.script = script  # the file being read now
        self.ctx = ctx
        self.expander = Expander(self)
        self.variables = Variables(self)
        self.flow = ControlFlow(self)
        self.loops = Loops(self)
        self.cases = Cases(self)
        self.tests = TestCommands(self)
        self.commands = Commands(self)
        self.builtins = Builtins(self)
        self.declarations = Declarations(self)
        self.directory = WorkingDirectory(self)
        parts = (
            self.flow,
            self.loops,
            self.cases,
            self.tests,
            self.variables,
            self.commands,
            self.builtins,
            self.declarations,
        )
        # node type -> the method that runs it (ControlFlow.exec dispatches on it)
        self.handlers = {t: getattr(part, "x_" + t) for part in parts for t in _node_types(part)}
        # builtin name -> the method that runs it
        self.builtin_table = {name: getattr(getattr(self, part), meth) for name, (part, meth) in BUILTINS.items()}

    # ---- the expansion host -------------------------------------------
    @property
    def script_name(self) -> str:
        return self.ctx.script_name

    @property
    def main_path(self) -> str | None:
        return self.ctx.main_path

    @property
    def always_set(self) -> frozenset:
        return self.ctx.always_set

    def missing(self, name: str) -> Field | None:
        return self.ctx.missing(name)

    def assign_scalar(self, st: State, name: str, value: Field, loc, attrs: dict | None = None) -> None:
        self.variables.assign_scalar(st, name, value, loc, attrs)

    def assign_element(self, st: State, name: str, index: Field, value: Field, loc) -> None:
        self.variables.assign_element(st, name, index, value, False, loc)

    @contextmanager
    def reading(self, script: Script):
        """The current file while a function body, a sourced file, `eval` text or an
        arithmetic snippet runs: locations and node texts are read from it."""
        saved = self.script
        self.script = script
        try:
            yield script
        finally:
            self.script = saved

    def note(self, st: State, loc, kind: NoteKind, message: str, key=None) -> None:
        st.notes.append(Note(kind, loc, message, key))

    def call_function(self, name: str, args: list[Field], st: State, loc) -> list[State]:
        """Run a function the script defines on `st` (for `$(f ARGS)`): the states it ends in."""
        return self.flow.call_function(name, args, st, 0, loc)

    def note_once(self, st: State, loc, kind: NoteKind, message, key=None) -> None:
        for n in st.notes:
            if n.kind == kind and n.key == key:
                return
        self.note(st, loc, kind, message, key)

    def give_up(self, st: State, node, why: str, kind: NoteKind = NoteKind.BUDGET) -> State:
        """An evaluation budget ran out: the path ends, incomplete."""
        st.incomplete = True
        st.flow = "exit"
        st.flow_arg = None
        self.note(st, self.script.loc(node), kind, f"cannot follow the script here: {why}")
        return st

    def run(self, env: dict, positional: tuple = ()) -> list[State]:
        st = State(vars={}, funcs={}, positional=tuple(positional))
        for name, value in (self.ctx.ambient or {}).items():
            st.vars[name] = Var(Field.of(value), exported=True)
        for name, value in env.items():
            if value is not None and value is not OTHER:
                st.vars[name] = Var(Field.of(value), exported=True)
        if any(v is OTHER for v in env.values()):
            # a switch set to "none of the literals": unknown text, known not to be them
            info = self.ctx.switches or scan(self.script, read_file=self.ctx.read_file)
            for name, value in env.items():
                if value is OTHER:
                    names, literals = other_exclusions(info, name)
                    unknown = Unknown("${" + name + "}", f"environment variable {name}")
                    st.vars[name] = Var(Field((unknown,)), exported=True)
                    st.excluded = {**st.excluded, **{n: literals for n in names}}
        st.vars["BASH_SOURCE"] = Var((Field.of(self.ctx.script_name),))
        return self.flow.exec_block(self.script.root, [st], 0)

    def arith_command(self, expr, st: State, loc) -> tuple[int | None, bool]:
        """Arithmetic in a command (`(( ))`, `let`, `for ((;;))`, `shift N`): (value, True);
        on a bash arithmetic error the command fails (status 1, a note): (None, False)."""
        try:
            return self.expander.arithmetic(expr, st, loc), True
        except ArithFailure as err:
            self.note(st, loc, NoteKind.ARITHMETIC, f"arithmetic error: {err.error}")
            st.status = 1
            return None, False

    def past_bounds(self, states: list[State], events, node) -> None:
        """What went past a bound of one operation (limits.Meter events: (why, Loc or None)) while
        `node` ran: each path is incomplete from here, the note says where and which bound."""
        for why, loc in events:
            where = loc or self.script.loc(node)
            message = f"cannot follow the script here: {why}; what it gives is unknown"
            for st in states:
                st.incomplete = True
                if not any(n.loc == where and n.message == message for n in st.notes):
                    self.note(st, where, NoteKind.INCOMPLETE, message)

    def unfollowed(self, st: State, loc, why: str) -> State:
        st.incomplete = True
        self.note(st, loc, NoteKind.INCOMPLETE, f"cannot follow the script here: {why}")
        st.status = None
        return st


def _node_types(part) -> list[str]:
    """The node types a part runs: its `x_<type>` methods."""
    return [name[2:] for name in dir(type(part)) if name.startswith("x_")]


def outcome_of(st: State, env: dict) -> Outcome:
    if st.incomplete:
        status = "incomplete"
    elif st.launches:
        status = "launches"
    elif st.flow == "exit" and st.flow_arg not in (0,):
        status = "rejected"
    else:
        status = "no-launch"
    code = st.flow_arg if st.flow == "exit" else st.status
    assumptions = tuple(
        Assumption(a.subject, "not in", tuple(sorted(st.excluded[a.subject])))
        if a.relation == "other" and st.excluded.get(a.subject)
        else a
        for a in st.assumptions
    )
    for name, value in env.items():  # a switch the profile sets to none of its literals
        if value is OTHER and not any(a.subject == name for a in assumptions):
            excluded = tuple(sorted(st.excluded.get(name, ())))
            assumptions += (Assumption(name, "not in", excluded) if excluded else Assumption(name, "set"),)
    ended = st.ended if st.flow == "exit" and not st.incomplete else None
    secrets = secret_values(st.vars)
    return Outcome(dict(env), assumptions, status, code, list(st.launches), list(st.notes), ended, secrets)


SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|_PAT$", re.IGNORECASE)


def secret_values(variables) -> frozenset:
    """The known values of the variables whose names look like secrets (`*TOKEN*`, `*SECRET*`,
    `*PASSWORD*`, `*KEY*`, `*_PAT`) and whose values look like credentials (looks_like_credential):
    reports print them as `***`. `PROMPT_KEY=prompt`, `HF_TOKEN=YOUR_TOKEN_HERE`, a path or a
    number are no credential: they are printed as bash made them."""
    found = set()
    for name, value in variables.items():
        if not isinstance(name, str) or not SECRET_NAME.search(name):
            continue
        value = value.value if isinstance(value, Var) else value  # a shell variable, a Field, or text
        items = value if isinstance(value, tuple) else tuple(value.values()) if isinstance(value, dict) else (value,)
        # a password or secret: any value of it (not a variable naming where one is: *_FILE, *_PATH)
        secret = _SECRET_WORD.search(name) is not None and _WHERE.search(name) is None
        for item in items:
            text = item if isinstance(item, str) else getattr(item, "value", None)
            if isinstance(text, str) and (looks_like_credential(text) or secret and _could_be_password(text)):
                found.add(text)
    return frozenset(found)


_SECRET_WORD = re.compile(r"SECRET|PASSWORD|PASSWD", re.IGNORECASE)
_WHERE = re.compile(r"_(?:FILE|PATH|DIR|NAME|URL)$", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"(?i)^(?:[0-9.]+|true|false|yes|no|on|off|none|null|changeme|\W*your[\W_].*|.*xxx.*|<.*>)$")


def _could_be_password(text: str) -> bool:
    """A value of a variable named for a password or a secret: anything of at least 4
    characters but a number, a boolean or a placeholder (`YOUR_PASSWORD`, `<secret>`)."""
    return len(text) >= 4 and not _PLACEHOLDER.match(text)


# the prefixes of tokens that scanners know (Hugging Face, OpenAI and Anthropic, GitHub, GitLab,
# Slack, AWS access keys, NVIDIA, Weights & Biases' local keys, Google's API keys)
_TOKEN_PREFIXES = (
    "hf_", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
    "xoxb-", "xoxp-", "xoxa-", "AKIA", "ASIA", "nvapi-", "local-", "AIza",
)  # fmt: skip
_CREDENTIAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+=/.")


def looks_like_credential(text: str) -> bool:
    """Whether a value looks like a credential, as secret scanners judge: a known token prefix
    followed by at least 6 token characters; or one word of letters and digits mixed, of at
    least 16 hexadecimal digits (a digest, a W&B key) or at least 20 characters of high entropy
    (over 3.5 bits a character: a random key). A placeholder (`YOUR_WANDB_API_KEY`), a word, a
    path or a number is none."""
    if not text or any(ch not in _CREDENTIAL_CHARS for ch in text):
        return False
    if any(text.startswith(p) and len(text) >= len(p) + 6 for p in _TOKEN_PREFIXES):
        return True
    if len(text) < 16 or "/" in text and text.count("/") > 1:  # (a path, not a key)
        return False
    if not (any(c.isdigit() for c in text) and any(c.isalpha() for c in text)):
        return False
    hexadecimal = all(c in "0123456789abcdefABCDEF" for c in text)  # a digest, W&B's keys
    return hexadecimal or len(text) >= 20 and _entropy(text) > 3.5


def _entropy(text: str) -> float:
    """Shannon entropy of the text's characters, in bits a character."""
    import math

    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def evaluate(
    script: Script,
    env: dict,
    unset_inputs,
    on_command,
    *,
    ambient: dict | None = None,
    budget: Budget | None = None,
    allowance: Allowance | None = None,
    script_name: str | None = None,
    parsed: dict | None = None,
    read_file=None,
    switches=None,
    positional: tuple = (),
) -> list[Outcome]:
    """All end states of `script` run with `env` (one profile). `parsed` collects
    (and shares across profiles) the files the script sources; `switches` is the
    script's profiles.scan, when the caller has it already (else it is made on need);
    `allowance` is the script's step and time budget, shared by the profiles evaluated
    with it (default: a fresh one from `budget`)."""
    allowance = allowance or Allowance(budget or Budget())
    ctx = Context(script_name or script.path, unset_inputs, ambient, allowance, on_command, read_file or reader())
    if parsed is not None:
        ctx.parsed = parsed
    ctx.main_path = script.path
    ctx.main_script = script
    ctx.always_set = set_by_environment(script)
    ctx.switches = switches
    interp = Interpreter(script, ctx)
    with metering(allowance):
        states = interp.run(env, positional)
    return [outcome_of(st, env) for st in states]


__all__ = ["evaluate", "Outcome", "Budget", "Allowance"]
