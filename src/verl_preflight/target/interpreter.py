"""`--python PATH`: the verl a given interpreter would import, as the installed one.

pre-commit runs a hook in an environment of its own, and a CI job may run the tool beside
another Python than the training's: there, the verl the project installs with `pip install
-e` is not the tool's. `--python PATH` (or the settings' `python`) asks that interpreter
where `import verl` would load from, with importlib's find_spec: the package is found, never
imported (importing verl pulls torch and Ray). The question runs in an empty folder (so that
no `verl/` of the working directory answers), with the interpreter's own site-packages and
`.pth` files (an editable install is one), under a time limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

from ..core.config_location import installed_version
from ..hydra_stage.tree import ConfigSource

_ASK = (
    "import importlib.util, json\n"
    "spec = importlib.util.find_spec('verl')\n"
    "print(json.dumps(list(spec.submodule_search_locations or []) if spec is not None else None))\n"
)
TIMEOUT = 30.0
ORIGIN = "the verl of "  # + the interpreter: how the report says it (target.launch_verl reads it)


class InterpreterError(Exception):
    """The interpreter cannot be asked, or has no verl with a config tree."""


def interpreter_verl(python: str) -> ConfigSource:
    """The verl `python` imports, as a ConfigSource (its origin names the interpreter)."""
    with tempfile.TemporaryDirectory() as empty:
        try:
            proc = subprocess.run(
                [python, "-c", _ASK],
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                cwd=empty,
                stdin=subprocess.DEVNULL,
                env={k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"},
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            raise InterpreterError(f"cannot be asked where verl is ({err})") from err
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no answer"])[-1]
        raise InterpreterError(f"cannot be asked where verl is ({last})")
    try:
        folders = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as err:
        raise InterpreterError("gave no answer to where verl is") from err
    if not folders:
        raise InterpreterError("has no verl installed (pip install verl there, or leave --python out)")
    package = folders[0]
    config = os.path.join(package, "trainer", "config")
    if not os.path.isfile(os.path.join(config, "ppo_trainer.yaml")):
        raise InterpreterError(f"its verl at {package} has no trainer/config/ppo_trainer.yaml")
    return ConfigSource(config, installed_version(package), package, f"{ORIGIN}{python}")
