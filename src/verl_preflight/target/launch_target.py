"""The target of a launch: the device, the stack, the config folders and the verl it will meet.

The pipeline decides it once for each launch in each profile (`decide`), and every
rule, `render` and the memory summary read that one answer: no rule decides a
device, a version or a folder for itself. Each part says where it came from. A
part that nothing decides is *unknown*, never guessed: a rule whose verdict
depends on it says what happens on each side instead of a confident error.

Device, the first signal that speaks:
  1. `--device` (or `[tool.validate-scripts] device`); under `--profile current`,
     this machine (the scripts' own torch_npu probe);
  2. the profile's DEVICE (gpu, cuda / npu, ascend);
  3. a `trainer.device` the launch sets;
  4. Ascend's environment at the launch: ASCEND_*, HCCL_*, VLLM_ASCEND_*, PYTORCH_NPU_*
     or TASK_QUEUE_ENABLE exported, or CANN's set_env.sh sourced;
  5. a key only Ascend reads: a MindSpeed argument that no Megatron-Core
     TransformerConfig has, or MindSpeed-Bridge's GDN flags;
  6. the script's path or its header comment naming NPU or Ascend.
  Otherwise the device is unknown: verl takes it from the hardware it starts on
  (verl 0.9.1 utils/device.py:151-166 auto_set_device; v0.7.0 trainer/main_ppo.py:42-43).

Stack (each package on its own), the first that names a version: `--stack`, the
script's comments (a pin under a heading that names the device or the
MindSpeed-Bridge path holds there only), requirements files and Dockerfiles
beside the script or above it (up to the repository root; a file named for
Ascend holds on Ascend only), the installed packages under `--profile current`,
then DEFAULTS. MindSpeed-Bridge runs where `--stack mindspeed-bridge=...` or the
profile's USE_MINDSPEED_BRIDGE says so, else not (the default Ascend path).

verl and its config folders: target_config.py.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..core.values import Loc, shown_path
from .stack import branch_note

GPU, NPU = "gpu", "npu"
DEVICES = (GPU, NPU)
_DEVICE_WORDS = {"gpu": GPU, "cuda": GPU, "nvidia": GPU, "npu": NPU, "ascend": NPU}


@dataclass(frozen=True)
class Device:
    """gpu, npu, or None when nothing says; `why` is the signal, as said to the user."""

    kind: str | None
    why: str
    loc: Loc | None = None  # where the script gives the signal (None: outside the script)

    @property
    def known(self) -> bool:
        return self.kind is not None

    def describe(self) -> str:
        return f"{self.kind or 'not known'} ({self.why})"


# ---- the stack ------------------------------------------------------------------

# What the tool assumes when nothing names a version (docs/checks.md, "The target"): the
# GPU path and the default Ascend path of verl's Megatron scripts run Megatron-LM
# 0.16 and, on Ascend, MindSpeed core_r0.16.0; the MindSpeed-Bridge path (verl
# PR #7335) runs Megatron-LM core_v0.18.0, MindSpeed core_r0.18.0 and
# Megatron-Bridge v0.5.0.
DEFAULTS = {
    GPU: {"megatron-core": "0.16.1"},
    NPU: {"megatron-core": "0.16.1", "mindspeed": "core_r0.16.0"},
    "npu+mindspeed-bridge": {"megatron-core": "0.18.0", "mindspeed": "core_r0.18.0", "megatron-bridge": "v0.5.0"},
    None: {"megatron-core": "0.16.1"},
}
PACKAGES = ("verl", "megatron-core", "megatron-bridge", "mbridge", "mindspeed", "mindspeed-bridge", "vllm")
DEFAULT = "default"


@dataclass(frozen=True)
class Stack:
    """The versions a launch meets, each with where it came from."""

    versions: tuple  # ((package, version), ...)
    origins: tuple  # ((package, where it came from), ...)
    mindspeed_bridge: bool | None  # on Ascend: whether MindSpeed-Bridge runs; None off Ascend
    bridge_origin: str = DEFAULT
    bridge: str = "megatron-bridge"  # the GPU bridge: "megatron-bridge", or "mbridge" (vanilla_mbridge=True)

    def version(self, package: str) -> str | None:
        return dict(self.versions).get(package)

    def origin(self, package: str) -> str | None:
        return dict(self.origins).get(package)

    def assumed(self, package: str) -> bool:
        """The version is the tool's default, not one anything named."""
        return self.origin(package) == DEFAULT

    def names(self, *packages: str) -> str:
        """`megatron-core 0.16.1, mindspeed core_r0.16.0 (default)`: the packages asked about, those
        of one origin together."""
        groups: dict[str, list[str]] = {}
        for p in packages:
            if self.version(p) is not None:
                groups.setdefault(self.origin(p), []).append(f"{p} {self.version(p)}")
        return ", ".join(f"{', '.join(names)} ({origin})" for origin, names in groups.items())


def plain_version(package: str, ref: str) -> str:
    """core_v0.18.0 / v0.18.0 / 0.18.0 -> 0.18.0; MindSpeed keeps its branch name (0.16.0 -> core_r0.16.0)."""
    ref = ref.strip()
    if package == "mindspeed":
        return "core_r" + ref if re.match(r"\d+\.\d+", ref) else ref  # a commit stays a commit
    m = re.fullmatch(r"(?:core_v|core_r|v)?(\d+\.\d+(?:\.\d+)?(?:[.+-]\w+)*)", ref)
    return m.group(1) if m else ref


def version_tuple(version: str | None) -> tuple:
    """(0, 18, 0) for 0.18.0 / core_v0.18.0; () for a commit, a branch or nothing."""
    if not version:
        return ()
    m = re.match(r"(?:core_v|core_r|v)?(\d+)\.(\d+)(?:\.(\d+))?", version)
    if not m:
        return ()
    return tuple(int(x) for x in m.groups() if x is not None)


@dataclass(frozen=True)
class Pin:
    """A version a file names for a package, and where that holds (device, MindSpeed-Bridge)."""

    package: str
    ref: str
    where: str  # said to the user: "script header, line 12", "requirements.txt", ...
    device: str | None = None  # None: every device
    bridge: bool | None = None  # None: with or without MindSpeed-Bridge

    def holds(self, device: str | None, bridge: bool | None) -> bool:
        if self.device is not None and self.device != device:
            return False
        return self.bridge is None or self.bridge == bool(bridge)


# Package names as people write them in comments, requirements and Dockerfiles.
_NAMES = [
    (re.compile(r"mindspeed[-_ ]?bridge", re.I), "mindspeed-bridge"),
    (re.compile(r"megatron[-_ ]?bridge", re.I), "megatron-bridge"),
    (re.compile(r"megatron[-_ ]?(?:core|lm)|\bmcore\b", re.I), "megatron-core"),
    (re.compile(r"\bmbridge\b", re.I), "mbridge"),
    (re.compile(r"\bmindspeed\b(?![-_ ]?(?:rl|llm|mm|ops|bridge))", re.I), "mindspeed"),
    (re.compile(r"\bvllm\b(?![-_ ]?ascend)", re.I), "vllm"),
]
# a release (x.y.z), a Megatron-LM / MindSpeed branch, or a commit; followed by the end of a word
_REF = r"(core_[rv]\d+\.\d+\.\d+|v?\d+\.\d+\.\d+(?:\.post\d+|rc\d+)?|(?=[0-9a-f]*\d)[0-9a-f]{7,40})(?=$|[\s,;)\]])"
_AFTER_NAME = re.compile(r"^[^\w\n]{0,3}?(?:==|@|:|\s)\s*(?:-b\s+|--branch[ =])?" + _REF)
_GIT_URL = re.compile(r"https?://[\w.-]+/[\w.-]+/([\w.-]+?)(?:\.git)?@([\w.+-]+)")
_BRANCH_CLONE = re.compile(r"(?:-b|--branch)[ =]+([\w.+-]+)\s+\S*https?://[\w.-]+/[\w.-]+/([\w.-]+?)(?:\.git)?(?:\s|$)")


def _package_of(text: str) -> list[tuple[str, int]]:
    """(package, end offset of its name) for each package named in `text`."""
    out, taken = [], []
    for pattern, package in _NAMES:
        for m in pattern.finditer(text):
            if any(a <= m.start() < b for a, b in taken):
                continue
            taken.append((m.start(), m.end()))
            out.append((package, m.end()))
    return out


def pins_in_line(line: str) -> list[tuple[str, str]]:
    """(package, ref) for each package named in one line with a version after it:
    `megatron-core==0.13.0`, `Megatron-LM core_v0.18.0`, `MindSpeed 0.16.0`,
    `git+https://github.com/NVIDIA/Megatron-LM.git@core_v0.12.0`, `git clone -b core_r0.16.0 .../MindSpeed`."""
    found: dict[str, str] = {}
    for m in _GIT_URL.finditer(line):
        for package, _ in _package_of(m.group(1)):
            found.setdefault(package, m.group(2))
    for m in _BRANCH_CLONE.finditer(line):
        for package, _ in _package_of(m.group(2)):
            found.setdefault(package, m.group(1))
    for package, end in _package_of(line):
        m = _AFTER_NAME.match(line[end:])
        if m:
            found.setdefault(package, m.group(1))
    return list(found.items())


def _scope(heading: str) -> tuple[str | None, bool | None] | None:
    """The device and MindSpeed-Bridge choice a comment heading names (None: it names neither)."""
    low = heading.lower()
    bridge_named = "mindspeed-bridge" in low or "use_mindspeed_bridge" in low
    ascend = "ascend" in low or re.search(r"\bnpus?\b", low) is not None
    if bridge_named and ("=false" in low or "without" in low or "default" in low):
        return NPU, False
    if bridge_named:
        return NPU, True
    if ascend:
        return NPU, None
    if re.search(r"\bgpus?\b|\bcuda\b", low):
        return GPU, None
    return None


def comment_pins(text: str, where: str) -> list[Pin]:
    """Versions the script's comments pin. A comment line that names no version but a device
    (or the MindSpeed-Bridge path) is a heading: pins below it hold there, up to an empty
    comment line or the end of the comment block."""
    out: list[Pin] = []
    scope: tuple[str | None, bool | None] = (None, None)
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped.startswith("#") or stripped.startswith("#!"):
            scope = (None, None)
            continue
        body = stripped.lstrip("#").strip()
        if not body:
            scope = (None, None)
            continue
        pins = pins_in_line(body)
        if not pins:
            named = _scope(body) if not re.match(r"[-*+]|\d+[.)]", body) else None  # a heading, not a list item
            if named is not None:
                scope = named
            continue
        for package, ref in pins:
            out.append(Pin(package, ref, f"{where}, line {number}", *scope))
    return out


def file_pins(path: str, text: str, shown: str) -> list[Pin]:
    """Versions a requirements file or Dockerfile pins. A file named for Ascend or NPU (or GPU,
    CUDA) holds there only; a file that installs MindSpeed-Bridge describes its stack."""
    name = os.path.basename(path).lower()
    device = NPU if ("ascend" in name or "npu" in name) else (GPU if ("gpu" in name or "cuda" in name) else None)
    found = []
    for line in text.splitlines():
        body, _, comment = line.partition(" #")
        body = body.strip()
        if body and not body.startswith("#"):
            # a commit taken from a release branch (`...@<sha>  # branch core_r0.18.0`) is that
            # release line: versions are known by branch
            branch = branch_note(comment)
            found.extend((package, branch or ref) for package, ref in pins_in_line(body))
    bridge = True if any(p == "mindspeed-bridge" for p, _ in found) else None
    if bridge:
        device = NPU
    return [Pin(package, ref, shown, device, bridge) for package, ref in found]


def stack_files(start: str, looked_in=None) -> list[str]:
    """Requirements files and Dockerfiles in `start` and the folders above it, nearest first,
    up to the repository root (a folder with .git) or the file system's root; `looked_in(folder,
    names)` is told each folder looked in and the names found (a dependency of the result)."""
    from ..store.dependencies import stack_names

    out = []
    cur = os.path.abspath(start)
    for _ in range(32):
        names = stack_names(cur)
        if looked_in is not None:
            looked_in(cur, names)
        out.extend(os.path.join(cur, n) for n in names)
        parent = os.path.dirname(cur)
        if parent == cur or os.path.isdir(os.path.join(cur, ".git")):
            break
        cur = parent
    return out


def resolve_stack(
    device: str | None,
    bridge: tuple[bool | None, str],
    pins: list[Pin],
    pinned: dict,
    installed: dict | None,
    vanilla_mbridge: bool,
) -> Stack:
    """The stack for one device and MindSpeed-Bridge choice: --stack, then the pins (in the
    order given: comments, files), the installed packages, then DEFAULTS."""
    uses_bridge, bridge_origin = bridge
    versions: dict[str, str] = {}
    origins: dict[str, str] = {}

    def offer(package: str, version: str | None, origin: str) -> None:
        if version and package not in versions and package in PACKAGES:
            versions[package] = plain_version(package, version)
            origins[package] = origin

    for package, version in pinned.items():
        offer(package, version, "--stack")
    for pin in pins:
        if pin.holds(device, uses_bridge):
            offer(pin.package, pin.ref, pin.where)
    for package, version in (installed or {}).items():
        offer(package, version, "installed")
    key = "npu+mindspeed-bridge" if device == NPU and uses_bridge else device
    for package, version in DEFAULTS[key].items():
        offer(package, version, DEFAULT)
    return Stack(
        tuple(sorted(versions.items())),
        tuple(sorted(origins.items())),
        uses_bridge if device == NPU else None,
        bridge_origin,
        "mbridge" if vanilla_mbridge else "megatron-bridge",
    )


# ---- the target ---------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What one launch in one profile meets: device, stack, verl and config folders."""

    device: Device
    stack: Stack
    verl: object  # hydra_stage.tree.ConfigSource: the verl (version, where from) and its config tree
    config: object  # target_config.ConfigSearch: the folders Hydra searches

    @property
    def on_npu(self) -> bool:
        return self.device.kind == NPU

    @property
    def on_gpu(self) -> bool:
        return self.device.kind == GPU

    def describe(self) -> str:
        """One line: `verl 0.9.1 (installed); device npu (DEVICE=npu); megatron-core 0.18.0 (...), ...`."""
        parts = [self.verl.describe(), f"device {self.device.describe()}"]
        versions = [p for p in PACKAGES if p != "verl" and self.stack.version(p) is not None]
        if versions:
            parts.append(self.stack.names(*versions))
        if self.stack.mindspeed_bridge is not None:
            state = "on" if self.stack.mindspeed_bridge else "off"
            parts.append(f"MindSpeed-Bridge {state} ({self.stack.bridge_origin})")
        config = self.config.describe()
        if config:
            parts.append(config)
        return "; ".join(parts)

    def as_json(self) -> dict:
        return {
            "device": {"kind": self.device.kind, "why": self.device.why},
            "stack": {p: {"version": v, "origin": self.stack.origin(p)} for p, v in self.stack.versions if p != "verl"},
            "mindspeed_bridge": self.stack.mindspeed_bridge,
            "verl": self.verl.as_json(),
            "config": self.config.as_json(),
        }


# ---- the signals of one script --------------------------------------------------

# variables only Ascend's software reads: CANN, HCCL, vllm-ascend, torch_npu
_ASCEND_ENV = re.compile(r"(?:VLLM_ASCEND_|ASCEND_|HCCL_|PYTORCH_NPU_)\w*\Z|TASK_QUEUE_ENABLE\Z")
_CANN_SOURCE = re.compile(r"^[ \t]*(?:source|\.)[ \t]+\S*/Ascend/\S*set_env\.sh", re.M)
_ASCEND_WORD = re.compile(r"(?i)(?:^|[^a-z0-9])(npus?|ascend)(?:[^a-z0-9]|$)")
_OTC = re.compile(r"^(?:actor_rollout_ref\.(?:actor|ref)|critic)\.megatron\.override_transformer_config\.(\w+)")
# MindSpeed-Bridge's own GDN flags (verl PR #7335): read on Ascend only
BRIDGE_FLAGS = frozenset({"use_ascend_gdn", "use_triton_gdn"})


@dataclass
class ScriptSignals:
    """What a script says about its target, read once per script: comments, files beside it,
    CANN's set_env.sh sourced, a path or header naming Ascend."""

    pins: list = field(default_factory=list)  # [Pin], comments first, then files
    cann: dict = field(default_factory=dict)  # path -> Loc of the first `source .../Ascend/.../set_env.sh`
    named_ascend: Device | None = None  # the path or header says NPU / Ascend

    @staticmethod
    def read(path: str, texts: dict, read_file) -> ScriptSignals:
        """`texts`: {path: text} of the script and the files it sources; `read_file`: the
        pipeline's reader (source.Recorder), which records what was read and which folders were
        looked in (the stack files, and their absence, are then part of what a cached result
        depends on)."""
        out = ScriptSignals()
        main = texts.get(path, "")
        out.pins = comment_pins(main, "script comment")
        if path != "-":
            for found in stack_files(os.path.dirname(path) or ".", read_file.listed):
                text = read_file.text(found)
                if text is not None:
                    out.pins.extend(file_pins(found, text, shown_path(found)))
        for p, text in texts.items():
            m = _CANN_SOURCE.search(text)
            if m:
                line = text.count("\n", 0, m.start()) + 1
                out.cann[p] = Loc(p, line, 1)
        out.named_ascend = _named_ascend(path, main)
        return out


def _named_ascend(path: str, text: str) -> Device | None:
    if path != "-":
        parts = os.path.normpath(os.path.abspath(path)).split(os.sep)[-3:]
        for n, part in enumerate(parts):
            if _ASCEND_WORD.search(part.replace(".sh", "")):
                return Device(NPU, "its file name" if n == len(parts) - 1 else f"its folder {part}")
    for number, line in enumerate(text.splitlines()[:30], start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if (
            not stripped.startswith("#!")
            and _ASCEND_WORD.search(stripped)
            and not re.search(r"(?i)\bgpus?\b", stripped)
        ):
            return Device(NPU, f"the header names it (line {number})", Loc(path, number, 1))
    return None


@lru_cache(maxsize=1)
def ascend_only_keys() -> frozenset:
    """override_transformer_config keys only Ascend reads: the arguments some MindSpeed branch
    registers that no Megatron-Core TransformerConfig of the shipped versions has, and
    MindSpeed-Bridge's GDN flags."""
    from ..sources import known_megatron_versions, known_mindspeed_branches, mindspeed_args, transformer_config_fields

    mindspeed = set()
    for branch in known_mindspeed_branches():
        mindspeed |= mindspeed_args(branch) or set()
    megatron = set()
    for version in known_megatron_versions():
        megatron |= transformer_config_fields(version) or set()
    return frozenset(mindspeed - megatron) | BRIDGE_FLAGS


# ---- deciding ---------------------------------------------------------------------


@dataclass(frozen=True)
class Forced:
    """What the run says for every launch: --device, --stack, --profile current's machine."""

    device: str | None = None  # --device
    stack: dict = field(default_factory=dict)  # --stack PKG=VERSION
    machine_device: tuple | None = None  # --profile current: (gpu|npu, why)
    installed: dict | None = None  # --profile current: installed package versions


def decide_device(forced: Forced, profile, overrides: dict, env: dict, signals: ScriptSignals) -> Device:
    """The device of one launch in one profile (the first signal that speaks; module docstring).
    `overrides`: {key: (value, loc)} of the launch's last known overrides; `env`: the exported
    variables at the launch (name -> shell Field)."""
    if forced.device:
        return Device(forced.device, f"--device {forced.device}")
    if forced.machine_device is not None:
        kind, why = forced.machine_device
        return Device(kind, f"this machine, --profile current: {why}")
    shown = profile.value("DEVICE") if profile is not None else None
    if isinstance(shown, str) and shown.lower() in _DEVICE_WORDS:
        return Device(_DEVICE_WORDS[shown.lower()], f"DEVICE={shown}")
    value, loc = overrides.get("trainer.device", (None, None))
    if isinstance(value, str) and value.lower() in _DEVICE_WORDS:
        return Device(_DEVICE_WORDS[value.lower()], f"trainer.device={value}", loc)
    for name in sorted(env):
        if _ASCEND_ENV.match(name):
            f = env[name]
            return Device(NPU, f"{name} exported", getattr(f, "loc", None))
    for loc in signals.cann.values():
        return Device(NPU, "the script sources CANN's set_env.sh", loc)
    only = ascend_only_keys()
    for key, (_, loc) in overrides.items():
        m = _OTC.match(key)
        if m and m.group(1) in only:
            return Device(NPU, f"override_transformer_config.{m.group(1)} is read only on Ascend", loc)
    if signals.named_ascend is not None:
        return signals.named_ascend
    return Device(None, "nothing in the script names it")


_TRUE = ("true", "1", "yes", "on")


def decide_bridge(forced: Forced, profile, device: str | None) -> tuple[bool | None, str]:
    """(whether MindSpeed-Bridge runs, why) on Ascend; (None, ...) elsewhere."""
    if device != NPU:
        return None, "not on Ascend"
    if forced.stack.get("mindspeed-bridge"):
        return True, "--stack"
    value = profile.value("USE_MINDSPEED_BRIDGE") if profile is not None else None
    if isinstance(value, str):
        return value.strip().lower() in _TRUE, f"USE_MINDSPEED_BRIDGE={value}"
    return False, DEFAULT


def known_overrides(spec) -> dict:
    """{key: (value, loc)} of the launch's overrides whose key is known (the last one wins),
    value None when it is known only at run time."""
    out = {}
    for o in spec.overrides:
        text = o.display
        if "=" not in text:
            continue
        key, _, value = text.partition("=")
        key = key.lstrip("+")
        if not key or "$" in key:
            continue
        out[key] = (value if o.known else None, o.loc)
    return out


def vanilla_mbridge_of(view, overrides: dict) -> bool:
    """verl's vanilla_mbridge for the actor: the launch's value, else the composed default."""
    if view is not None:
        return view.value("actor_rollout_ref.actor.megatron.vanilla_mbridge") is True
    value = overrides.get("actor_rollout_ref.actor.megatron.vanilla_mbridge", (None, None))[0]
    return isinstance(value, str) and value.lower() == "true"


def decide(spec, profile, signals: ScriptSignals, forced: Forced, verl, config, view=None) -> Target:
    """The target of one launch in one profile."""
    overrides = known_overrides(spec)
    device = decide_device(forced, profile, overrides, spec.env, signals)
    bridge = decide_bridge(forced, profile, device.kind)
    stack = resolve_stack(
        device.kind, bridge, signals.pins, forced.stack, forced.installed, vanilla_mbridge_of(view, overrides)
    )
    return Target(device, stack, verl, config)
