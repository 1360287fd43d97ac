"""What checking a script gives: its profiles, their launches and the findings (the records
the pipeline hands down to the reports, the result cache and --fix).

A module of its own, light to import: a run whose results all come from the cache rebuilds
them (plain.py) without importing the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LaunchResult:
    line: int
    module: str
    config_name: str | None
    overrides: list
    spec: LaunchSpec | None = None
    target: object = None  # target.Target: what the launch meets (device, stack, verl, config)
    unchecked: str | None = None  # why the Hydra stage did not compose it (None: it did)
    shown: object = None  # rendering.Shown: what `render` shows of it besides its words (render only)


@dataclass
class ProfileResult:
    profile: Profile
    status: str
    launches: list
    ended: tuple | None = None  # where it exits: (Loc, why, (function, Loc of its call) or None)
    stopped: tuple | None = None  # where the evaluator could not follow it: (Loc, why)


@dataclass
class ScriptResult:
    path: str
    profiles: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    fatal: str | None = None
    deps: dict = field(default_factory=dict)  # every file read: path -> SHA-256 (None: unreadable)
    reads: set = field(default_factory=set)  # variables the script (or what it sources) expands
    reached: set = field(default_factory=set)  # (path, line, col) of every word passed to a launch (--fix)
    coverage: object = None  # shell.profiles.Choice: the profiles chosen and what they cover (None: pinned)
    unchecked: object = None  # reach.Unchecked: it names a verl entry point and no launch is checked
    secrets: frozenset = frozenset()  # values reports mask (shell.evaluate.secret_values)
    no_launch: object = None  # reach.NoLaunch: no profile launches verl, and what it runs instead
    inputs: list = field(default_factory=list)  # (name, where the repository gives it) of the variables it takes
