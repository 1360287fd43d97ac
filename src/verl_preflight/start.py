"""The command's start: a command line whose report is kept and still true is answered at
once (command_memo.py, which imports a few light modules); any other goes to cli.main."""

from __future__ import annotations

import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        from .command_memo import replay

        status = replay(argv)
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # the kept report could not be written (a full disk, an encoding): as cli.main says it
        from .report import console

        console.internal_error(err)
        return 2  # application.EXIT_USAGE
    if status is not None:
        return status
    from .cli import main as run

    return run(argv)
