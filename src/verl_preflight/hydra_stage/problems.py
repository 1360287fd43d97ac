"""What the Hydra stage hands down: typed problems, never findings.

The stage knows Hydra and verl's config tree. It does not decide rule ids,
severities or wording policy: it says what kind of problem a launch has, where,
in Hydra's words, and (where a caller asked) which mechanical repair the
composition supports. The pipeline turns each into a finding of the rule that
owns its kind (each rule of rules/hydra/ names it, `problem = HydraKind.X`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto


class HydraKind(Enum):
    SYNTAX = auto()  # the override grammar refuses it
    SWEEP = auto()  # a sweep (a,b) where a value was meant
    MISSING_KEY = auto()  # `key=v` on a key the config does not have
    APPEND_EXISTING = auto()  # `+key=v` on a key that has a value
    DELETE_MISSING = auto()  # `~key` on a key that is not there (or another value)
    OVERRIDE_ERROR = auto()  # OmegaConf refused the value
    CONFIG_GROUP = auto()  # a group option that is not there
    CONFIG_NAME = auto()  # --config-name names no root config of the folders
    CONFIG_PATH = auto()  # the config folders are not here
    UNKNOWN_ARGUMENT = auto()  # an argument known only at run time, or no Hydra option
    UNKNOWN_ENTRY = auto()  # a module that is no Hydra entry point (or its source is not here)
    UNKNOWN_MODULE = auto()  # python3 -m cannot find the module
    FLAG = auto()  # a Hydra flag that changes what the launch does (-m, --cfg, ...)
    ARGUMENT = auto()  # a Hydra option used wrongly (--config-name without a value, ...)


@dataclass(frozen=True)
class Problem:
    """One override's problem as check_overrides finds it, by its position in the launch."""

    index: int | None  # which override (None: the launch as a whole)
    kind: HydraKind
    key: str | None
    message: str
    fix: object = None  # the repair the caller's `repair` proposed (an edits.Fix), where one is certain


@dataclass(frozen=True)
class LaunchProblem:
    """A problem of one launch, at its place in the script."""

    kind: HydraKind
    loc: object  # values.Loc
    message: str
    key: str | None = None
    fix: object = None
    at_most: str | None = None  # "warning", "info": weaker than the rule's severity here


def no_repair(kind, text, key, tree, source):
    """The default `repair`: none (a caller that applies no fixes)."""
    return None
