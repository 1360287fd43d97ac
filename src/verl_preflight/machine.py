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
