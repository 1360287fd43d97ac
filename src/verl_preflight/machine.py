"""This machine, for `--profile current`: its environment and what the scripts probe on it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass

PROBE_TIMEOUT = 60.0  # seconds; importing torch_npu imports torch, which is slow
PROBE = "import torch_npu"  # what the reference scripts run: DEVICE=$(python3 -c 'import torch_npu' && ...)


def probe_device(timeout: float = PROBE_TIMEOUT) -> tuple[str, str]:
    """(DEVICE, why): the scripts' own probe, `python3 -c 'import torch_npu'`, run with the
    first `python3` on PATH (the interpreter the script will run), not the validator's.
    `-B` keeps it from writing bytecode; its input is empty and its output discarded."""
    if "DEVICE" in os.environ:
        return os.environ["DEVICE"], "DEVICE is set in the environment"
    exe = shutil.which("python3")
    if exe is None:
        return "gpu", "no python3 on PATH, so the scripts' torch_npu probe would fail"
    try:
        proc = subprocess.run(
            [exe, "-B", "-c", PROBE],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "gpu", f"{exe} -c '{PROBE}' did not finish in {timeout:g}s; assumed gpu (set DEVICE to choose)"
    except OSError as err:
        return "gpu", f"{exe} could not be run ({err.strerror or err}), so the scripts' probe would fail"
    if proc.returncode == 0:
        return "npu", f"{exe} imports torch_npu"
    return "gpu", f"{exe} cannot import torch_npu"


DEVICES_TIMEOUT = 10.0  # seconds for `nvidia-smi -L` / `npu-smi info`; a hung driver must not hang the run


@dataclass(frozen=True)
class Devices:
    """The accelerators this machine shows, as its tools list them."""

    count: int | None  # None: not known (no tool on PATH, or it failed or hung)
    kind: str = ""  # "GPU" or "NPU" when count is known
    how: str = ""  # the command that said so, or why nothing did

    def describe(self) -> str:
        if self.count is None:
            return f"this machine's devices are not known ({self.how})"
        plural = "" if self.count == 1 else "s"
        return f"this machine shows {self.count} {self.kind}{plural} ({self.how})"

    def against(self, per_node) -> str:
        """render's line: what this machine shows next to what the job asks of each node."""
        asks = f"the job asks {per_node} per node" if isinstance(per_node, int) else "what the job asks is not known"
        return f"{self.describe()}; {asks}"


# `npu-smi info` prints a table; after the header, each chip has a row whose first cell is
# "<Chip> <Device/Phy-ID>" and whose second is its Bus-Id, under a row "<NPU id> <Name>"
# whose second cell is its health. The process table below it starts with "Process id".
_NPU_CHIP_ROW = re.compile(r"^\|\s*\d+\s+\d+\s*\|[^|]*\|[^|]*\|\s*$")


def count_gpus(text: str) -> int:
    """GPUs in `nvidia-smi -L` output: one line "GPU <i>: <name> (UUID: ...)" each (MIG
    instances are indented lines below their GPU)."""
    return sum(1 for line in text.splitlines() if line.startswith("GPU "))


def count_npus(text: str) -> int:
    """NPU chips in `npu-smi info` output: the chip rows of the device table (an Atlas A3 card
    shows two, one a die); the process table is not counted."""
    count = 0
    for line in text.splitlines():
        if "Process id" in line or "Process name" in line:
            break
        if _NPU_CHIP_ROW.match(line.strip()):
            count += 1
    return count


_TOOLS = (("nvidia-smi", ("-L",), "GPU", count_gpus), ("npu-smi", ("info",), "NPU", count_npus))


def _run(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run a tool in its own process group; on timeout the group is killed (a wrapper script's
    children too, which would otherwise keep the output pipes open) and TimeoutExpired raised."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err


def probe_devices(timeout: float = DEVICES_TIMEOUT) -> Devices:
    """The devices this machine shows: `nvidia-smi -L`, then `npu-smi info`, each run only when
    it is on PATH, read-only, with a timeout. A missing tool, a failure or a timeout is said
    in `how`, never raised."""
    notes = []
    for tool, args, kind, count_of in _TOOLS:
        exe = shutil.which(tool)
        if exe is None:
            continue
        command = " ".join((tool, *args))
        try:
            code, out, err = _run([exe, *args], timeout)
        except subprocess.TimeoutExpired:
            notes.append(f"{command} did not finish in {timeout:g}s")
            continue
        except OSError as error:
            notes.append(f"{command} could not be run: {error.strerror or error}")
            continue
        text = out.decode("utf-8", "replace")
        if code != 0:
            first = (err or out).decode("utf-8", "replace").strip().splitlines()
            why = f": {first[0][:120]}" if first else ""
            notes.append(f"{command} failed (exit {code}){why}")
            continue
        found = count_of(text)
        if found:
            return Devices(found, kind, command)
        notes.append(f"{command} lists no {kind}")
    if not notes:
        return Devices(None, how="neither nvidia-smi nor npu-smi is on PATH")
    return Devices(None, how="; ".join(notes))


def current_env(dims, device: str | None = None) -> dict:
    """The one profile this machine will run: its environment, DEVICE as probed (`device`,
    from probe_device, run once per run by the command line)."""
    env = {}
    for d in dims:
        if d.name in os.environ:
            env[d.name] = os.environ[d.name]
        elif d.name == "DEVICE":
            env["DEVICE"] = device if device is not None else probe_device()[0]
    return env


_DISTRIBUTIONS = {
    "megatron-core": "megatron-core",
    "megatron-bridge": "megatron-bridge",
    "mbridge": "mbridge",
    "mindspeed": "mindspeed",
}


def installed_stack() -> dict:
    """{package: version} of the stack packages installed here (read from their metadata)."""
    from importlib import metadata

    from .sources import installed_megatron_version

    out = {}
    for package, dist in _DISTRIBUTIONS.items():
        try:
            out[package] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    core = installed_megatron_version()
    if core:
        out["megatron-core"] = core
    return out
