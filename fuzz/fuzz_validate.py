"""atheris harness: any bytes as a launch script must never raise out of the validator.

    make fuzz     # or: python fuzz/fuzz_validate.py CORPUS_DIR -max_total_time=1800

The seed corpus is the example and fixture scripts (`make fuzz` copies them). Each input is
parsed, every profile is evaluated with small budgets, and launches are checked against
verl's config (cache in memory).
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

with atheris.instrument_imports():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    from verl_preflight.hydra_stage.tree import ConfigCache, ConfigCaches, locate
    from verl_preflight.rules.schema import load_schema
    from verl_preflight.shell.state import Budget
    from verl_preflight.validate import Options, validate_script

CACHE = ConfigCaches(ConfigCache(locate(None), use_disk=False))
OPTS = Options(max_profiles=8, budget=Budget(steps=20_000, states=16, loop_iterations=200), schema=load_schema())
WORKDIR = tempfile.mkdtemp(prefix="fuzz-")
PATH = os.path.join(WORKDIR, "input.sh")


def test_one(data: bytes) -> None:
    with open(PATH, "wb") as fh:
        fh.write(data)
    validate_script(PATH, CACHE, OPTS)


def main() -> None:
    sys.setrecursionlimit(10_000)
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
