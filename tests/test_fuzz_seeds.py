"""The seeds of `make fuzz` (fuzz/seeds/TARGET/), one a hostile input of issue 45's table, each
run through its target (fuzz/targets.py) as atheris runs it: in one process per target, under a
1.5 GB address-space limit and a timeout. A seed that raises, hangs or runs out of memory fails
here, in CI, without atheris."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT

FUZZ = os.path.join(ROOT, "fuzz")
SEEDS = os.path.join(FUZZ, "seeds")
LIMIT = 1_500_000_000  # bytes of address space
RUN = """
import os, sys, traceback
sys.path.insert(0, {fuzz!r})
from targets import TARGETS
target, failed = TARGETS[{name!r}], []
for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        target(data)
    except BaseException as err:
        failed.append(os.path.basename(path) + ": " + "".join(traceback.format_exception(err))[-1500:])
print("\\n".join(failed) or "all passed")
"""


def test_every_target_has_seeds_and_every_seed_a_target():
    sys.path.insert(0, FUZZ)
    try:
        from targets import TARGETS
    finally:
        sys.path.remove(FUZZ)
    assert sorted(os.listdir(SEEDS)) == sorted(TARGETS)
    assert all(os.listdir(os.path.join(SEEDS, name)) for name in TARGETS)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["script", "pyeval", "yaml", "files", "lsp", "cli"])
def test_each_seed_passes_its_target_within_bounds(name, tmp_path):
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    seeds = sorted(os.path.join(SEEDS, name, n) for n in os.listdir(os.path.join(SEEDS, name)))
    proc = subprocess.run(
        [sys.executable, "-c", RUN.format(fuzz=FUZZ, name=name), *seeds],
        capture_output=True, text=True, timeout=600, preexec_fn=limit, cwd=tmp_path,
        env=dict(os.environ, TMPDIR=str(tmp_path)),
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "all passed", proc.stdout + proc.stderr[-3000:]
