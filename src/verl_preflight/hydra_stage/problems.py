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
    fix: object = None  # the repair the caller's `remedy` proposed (an edits.Fix), where one is certain
    cause: GroupCause | RootCause | None = None  # a missing key another group option or root config has
    related: tuple = ()  # the other overrides (positions) of the same cause, folded into this one


@dataclass(frozen=True)
class LaunchProblem:
    """A problem of one launch, at its place in the script."""

    kind: HydraKind
    loc: object  # values.Loc
    message: str
    key: str | None = None
    fix: object = None
    at_most: str | None = None  # "warning", "info": weaker than the rule's severity here
    related: tuple = ()  # ((loc, key), ...): the other overrides of the same mistake


@dataclass(frozen=True)
class GroupCause:
    """Why keys are missing: the launch composes `group=chosen` (`explicit`: the launch selects it;
    else the root config's default) and the keys are in the config of `group=option`."""

    group: str
    chosen: str
    option: str
    explicit: bool
    keys: tuple = ()  # every key of the launch this cause explains, in order
    misplaced: str = ""  # the key the launch set to `option` in the group's place (a.b.model_engine), if any
    lost: tuple = ()  # with a misplaced choice: the launch's keys that `option` lacks (they fail once it is set)


@dataclass(frozen=True)
class RootCause:
    """Why keys are missing: the launch composes the root config `chosen` (its --config-name, or
    the entry point's own) and every one of them is in `other`, another root config of the same
    folder (a project's own root config the launch does not name)."""

    chosen: str
    other: str
    keys: tuple = ()


def no_remedy(problem, text, tree, source):
    """The default `remedy`: no fix, the stage's own message (a caller without rules)."""
    return None, problem.message
