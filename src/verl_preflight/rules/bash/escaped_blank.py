"""A backslash followed by a blank at the end of a line: no continuation."""

from __future__ import annotations

from ...shell.notes import NoteKind
from .. import Rule


class EscapedBlank(Rule):
    id = "escaped-blank"
    severity = "error"
    stage = "bash"
    note = NoteKind.ESCAPED_BLANK  # the shell note it reports
    summary = "a blank after the backslash at a line end: the command ends there"
    why = (
        "`\\` continues a line only when the newline follows it at once. With a blank after it bash passes "
        "an escaped blank, ' ', as an argument and ends the command on that line: Hydra refuses the ' ' "
        "override, and the lines below run as commands of their own. A `#` right after the escaped blank "
        "(`\\ # note`) starts no comment: it is part of the word ' #', and the note's words are arguments too."
    )
    ground_truth = "bash reference manual, 3.1.2.1 Escape Character (a backslash-newline pair is a continuation)"
    bad = "python3 -m verl.trainer.main_ppo \\\n    data.train_batch_size=256 \\ # batch\n    trainer.nnodes=1"
    good = "python3 -m verl.trainer.main_ppo \\\n    data.train_batch_size=256 \\\n    trainer.nnodes=1"
