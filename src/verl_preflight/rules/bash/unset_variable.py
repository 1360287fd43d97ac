"""`set -u` and a variable nobody assigns: bash stops unless it is exported."""

from __future__ import annotations

from ...shell.notes import NoteKind
from .. import Rule


class UnsetVariable(Rule):
    id = "unset-variable"
    severity = "warning"
    stage = "bash"
    note = NoteKind.UNSET_VARIABLE  # the shell note it reports
    summary = "`set -u` and a variable nobody assigns: bash stops unless it is exported"
    why = "Under `set -u` an unset variable ends the script with 'unbound variable'."
    bad = "set -u\npython3 -m verl.trainer.main_ppo data.train_files=$TRAIN"
    good = "set -u\nTRAIN=${TRAIN:-~/data/train.parquet}"
