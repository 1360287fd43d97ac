"""The stack a launch meets: versions named in script headers and in requirements-ascend.txt,
and the stack each launch in each profile resolves to (`resolve_stack`).

Script headers list components as `#   - <Name> <ref>` lines under a
"MindSpeed-Bridge" heading; requirements-ascend.txt pins the same components
as `name @ git+https://host/org/<Name>.git@<ref>`. Both are read here so a test
(and a rule) can compare them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

_HEADER_LINE = re.compile(r"^#\s+-\s+([A-Za-z][\w.-]*)\s+(\S+)\s*(?:#.*)?$")
_GIT_REQ = re.compile(r"^\s*[\w.-]+\s*@\s*git\+\S+/([^/@\s]+?)(?:\.git)?@(\S+)\s*$")


def header_components(text: str) -> dict[str, tuple[str, int]]:
    """{component: (ref, line)} from the header's MindSpeed-Bridge block."""
    out: dict[str, tuple[str, int]] = {}
    in_block = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("#"):
            if out or number > 200:
                break
            continue
        if "MindSpeed-Bridge" in line and "Requirements" in line:
            in_block = True
            continue
        if in_block:
            m = _HEADER_LINE.match(line)
            if m:
                out[m.group(1)] = (m.group(2), number)
            elif line.strip() == "#":
                in_block = False
    return out


def requirement_refs(text: str) -> dict[str, str]:
    """{repository name: ref} for the git+ lines of a requirements file."""
    out = {}
    for line in text.splitlines():
        m = _GIT_REQ.match(line.split(" #")[0])
        if m:
            out[m.group(1)] = m.group(2)
    return out


def drift(header: dict[str, tuple[str, int]], pins: dict[str, str]) -> list[tuple[str, str, str | None, int]]:
    """(component, header ref, pinned ref or None, line) for each disagreement."""
    lowered = {k.lower(): v for k, v in pins.items()}
    out = []
    for name, (ref, line) in header.items():
        pinned = lowered.get(name.lower())
        if pinned != ref:
            out.append((name, ref, pinned, line))
    return out


# ---- the stack a launch will meet ---------------------------------------------

# What the tool assumes when nothing names a version (README, "The stack"):
# the GPU path and the default Ascend path of the reference scripts run
# Megatron-LM 0.16 (megatron-core 0.16.1 is the 0.16 release with data here) and,
# on Ascend, MindSpeed core_r0.16.0; the MindSpeed-Bridge path (verl PR #7335)
# runs Megatron-LM core_v0.18.0, MindSpeed core_r0.18.0 and Megatron-Bridge v0.5.0.
DEFAULTS = {
    "gpu": {"megatron-core": "0.16.1"},
    "npu": {"megatron-core": "0.16.1", "mindspeed": "core_r0.16.0"},
    "npu+mindspeed-bridge": {"megatron-core": "0.18.0", "mindspeed": "core_r0.18.0", "megatron-bridge": "v0.5.0"},
}
PACKAGES = ("verl", "megatron-core", "megatron-bridge", "mbridge", "mindspeed")
# header / requirements names -> package names as --stack spells them
_COMPONENTS = {
    "megatron-lm": "megatron-core",
    "megatron-core": "megatron-core",
    "megatron-bridge": "megatron-bridge",
    "mindspeed": "mindspeed",
    "mbridge": "mbridge",
}


def _plain_version(ref: str) -> str:
    """core_v0.18.0 / v0.18.0 / 0.18.0 -> 0.18.0 (MindSpeed branches keep their name)."""
    m = re.fullmatch(r"(?:core_v|v)?(\d+\.\d+(?:\.\d+)?)", ref)
    return m.group(1) if m else ref


@dataclass(frozen=True)
class Stack:
    """What one launch in one profile will meet: engine, device, versions, and where each came from."""

    engine: str | None
    device: str  # gpu | npu
    mindspeed_bridge: bool
    bridge: str  # "megatron-bridge" or "mbridge" (verl's vanilla_mbridge=True)
    versions: tuple  # ((package, version), ...)
    origins: tuple  # ((package, where it came from), ...)

    def version(self, package: str) -> str | None:
        return dict(self.versions).get(package)

    def origin(self, package: str) -> str | None:
        return dict(self.origins).get(package)

    def names(self, *packages: str) -> str:
        """`megatron-core 0.16.1 (default)` for the packages asked about."""
        out = []
        for p in packages:
            v = self.version(p)
            if v is not None:
                out.append(f"{p} {v} ({self.origin(p)})")
        return ", ".join(out)


def version_tuple(version: str | None) -> tuple:
    if not version:
        return ()
    return tuple(int(x) for x in re.findall(r"\d+", _plain_version(version))[:3])


def resolve_stack(
    *,
    engine: str | None,
    device: str,
    mindspeed_bridge: bool,
    vanilla_mbridge: bool,
    pinned: dict | None = None,
    installed: dict | None = None,
    header: dict | None = None,
    requirements: dict | None = None,
) -> Stack:
    """The stack, from (in order) --stack / settings, the installed packages under
    --profile current, the script's header and requirements-ascend.txt (Ascend
    profiles), then DEFAULTS."""
    key = "npu+mindspeed-bridge" if device == "npu" and mindspeed_bridge else device
    versions: dict[str, str] = {}
    origins: dict[str, str] = {}

    def offer(package: str, version: str | None, origin: str) -> None:
        if version and package not in versions:
            versions[package] = _plain_version(version) if package != "mindspeed" else version
            origins[package] = origin

    for package, version in (pinned or {}).items():
        offer(package, version, "--stack")
    for package, version in (installed or {}).items():
        offer(package, version, "installed")
    if device == "npu" and mindspeed_bridge:
        for name, (ref, _line) in (header or {}).items():
            package = _COMPONENTS.get(name.lower())
            if package:
                offer(package, ref, "script header")
        for name, ref in (requirements or {}).items():
            package = _COMPONENTS.get(name.lower())
            if package:
                offer(package, ref, "requirements-ascend.txt")
    for package, version in DEFAULTS[key].items():
        offer(package, version, "default")
    bridge = "mbridge" if vanilla_mbridge else "megatron-bridge"
    return Stack(
        engine, device, mindspeed_bridge, bridge, tuple(sorted(versions.items())), tuple(sorted(origins.items()))
    )


def find_upwards(start: str, name: str) -> str | None:
    """`name` in `start` or a folder above it, up to a repository root."""
    cur = os.path.abspath(start)
    for _ in range(32):
        candidate = os.path.join(cur, name)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(cur)
        if parent == cur or os.path.isdir(os.path.join(cur, ".git")):
            return None
        cur = parent
    return None
