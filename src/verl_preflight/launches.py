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

from .findings import Finding
from .shell.words import Field, Loc

_PYTHON = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|torchrun)$")
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


def find_entry(argv: list[Field]) -> int | None:
    """Index of the verl module name in argv, or None if this is not a verl launch."""
    if not argv:
        return None
    first = argv[0].value
    if first in _NOT_LAUNCHERS:
        return None
    saw_launcher = False
    for i, f in enumerate(argv):
        text = f.value
        if text is None:
            saw_launcher = saw_launcher or i == 0
            continue
        if _PYTHON.match(os.path.basename(text)):
            saw_launcher = True
            continue
        if not saw_launcher:
            continue
        if text == "-m" and i + 1 < len(argv):
            mod = argv[i + 1].value
            if mod is not None and mod.startswith("verl."):
                return i + 1
        if text.startswith("-mverl."):
            return i
    return None


UNKNOWN_STANDIN = "unknown0"  # stands for a piece nobody can know when Hydra checks the text


@dataclass
class Override:
    text: str
    loc: Loc
    field: Field

    @property
    def checkable(self) -> str | None:
        """The text Hydra is asked about: unknown pieces of the value become a stand-in;
        None when the key itself is not known (the argument cannot be checked)."""
        if self.field.known:
            return self.text
        key_part = self.field.pieces[0] if self.field.pieces else ""
        if not isinstance(key_part, str) or ("=" not in key_part and not key_part.startswith("~")):
            return None
        return "".join(p if isinstance(p, str) else UNKNOWN_STANDIN for p in self.field.pieces)


@dataclass
class LaunchSpec:
    loc: Loc
    module: str
    config_path: str | None
    config_name: str | None
    overrides: list[Override] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    unknown: list[Override] = field(default_factory=list)  # arguments with unknown text
    config_name_loc: Loc | None = None
    config_path_loc: Loc | None = None


def read_launch(launch) -> LaunchSpec:
    argv = launch.argv
    entry = launch.entry
    mod_field = argv[entry]
    module = (
        mod_field.value[2:]
        if mod_field.value.startswith("-m") and entry > 0 and argv[entry - 1].value != "-m"
        else mod_field.value
    )
    spec = LaunchSpec(launch.loc, module, None, None)
    args = argv[entry + 1 :]
    i = 0
    while i < len(args):
        f = args[i]
        loc = f.loc or launch.loc
        text = f.value
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
                if not eq:
                    if i + 1 >= len(args):
                        spec.problems.append(Finding.at(loc, "hydra-argument", "error", f"{name} needs a value"))
                        break
                    val_field = args[i + 1]
                    val = val_field.value if val_field.value is not None else None
                    i += 1
                if name in ("--config-path", "-cp"):
                    spec.config_path, spec.config_path_loc = val, loc
                elif name in ("--config-name", "-cn"):
                    spec.config_name, spec.config_name_loc = val, loc
                i += 1
                continue
            if name in _HYDRA_FLAGS:
                spec.problems.append(
                    Finding.at(
                        loc,
                        "hydra-argument",
                        "warning",
                        f"Hydra flag {name} changes what the launch does; the config is not checked past it",
                    )
                )
                i += 1
                continue
            spec.problems.append(
                Finding.at(
                    loc,
                    "hydra-argument",
                    "error",
                    f"'{text}' is not a Hydra option: main_ppo will refuse it (unrecognized arguments)",
                )
            )
            i += 1
            continue
        spec.overrides.append(Override(text, loc, f))
        i += 1
    return spec
