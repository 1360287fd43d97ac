"""atheris harness: any bytes, as any input the tool reads, must never raise out of it.

    make fuzz                                   # every target, FUZZ_SECONDS each
    python fuzz/fuzz_validate.py --target pyeval CORPUS_DIR -max_total_time=600

The targets (a launch script, a vendored verl check, a YAML config, a planted folder, the
language server's input, command-line values) are in targets.py; their seeds in seeds/TARGET/
(`make fuzz` adds the example and fixture scripts to the script target's).
"""

from __future__ import annotations

import os
import sys

import atheris

with atheris.instrument_imports():  # the tool's modules, imported here to be instrumented
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from targets import TARGETS, import_all

    import_all()


def main() -> None:
    argv = list(sys.argv)
    name = "script"
    if "--target" in argv:
        at = argv.index("--target")
        name = argv[at + 1]
        del argv[at : at + 2]
    if name not in TARGETS:
        sys.exit(f"fuzz_validate.py: --target {name!r}: one of {', '.join(TARGETS)}")
    sys.setrecursionlimit(10_000)
    atheris.Setup(argv, TARGETS[name])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
