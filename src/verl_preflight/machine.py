"""This machine, for `--profile current`: its environment and what the scripts probe on it."""

from __future__ import annotations

import importlib.util
import os


def current_env(dims) -> dict:
    """The one profile this machine will run: its environment, DEVICE probed like the scripts do."""
    env = {}
    for d in dims:
        if d.name in os.environ:
            env[d.name] = os.environ[d.name]
        elif d.name == "DEVICE":
            try:
                npu = importlib.util.find_spec("torch_npu") is not None
            except (ImportError, ValueError):
                npu = False
            env["DEVICE"] = "npu" if npu else "gpu"
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
