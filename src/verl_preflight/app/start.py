"""The command's start: a command line whose report is kept and still true is answered at
once (command_memo.py, which imports a few light modules); any other goes to cli.main."""

from __future__ import annotations

import gc
import sys

# The cycle collector's first generation collected after 100,000 allocations instead of 700:
# a check allocates millions of small objects (syntax trees, words, findings), few of them in
# cycles, and collecting every 700 traversed them again and again (a cold check of verl 0.4.1's
# scripts 7-10% faster, its peak memory 7% larger; the -j workers, forked, inherit it).
COLLECT_AFTER = (100_000, 20, 20)


def main(argv=None) -> int:
    gc.set_threshold(*COLLECT_AFTER)
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        from .command_memo import replay

        status = replay(argv)
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # the kept report could not be written (a full disk, an encoding): as cli.main says it
        from ..report import console

        console.internal_error(err)
        return 2  # application.EXIT_USAGE
    if status is not None:
        return status
    from .cli import main as run

    return run(argv)
