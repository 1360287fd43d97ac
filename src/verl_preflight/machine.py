"""This machine, for `--profile current`: its environment and what the scripts probe on it."""

from __future__ import annotations

import os
import shutil
import subprocess

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
