"""`set -u` and a variable nobody assigns: bash stops unless it is exported."""

from __future__ import annotations

from .. import Rule


class UnsetVariable(Rule):
    id = "unset-variable"
    severity = "warning"
    stage = "bash"
    summary = "`set -u` and a variable nobody assigns: bash stops unless it is exported"
    why = "Under `set -u` an unset variable ends the script with 'unbound variable'."
    bad = "set -u\npython3 -m verl.trainer.main_ppo data.train_files=$TRAIN"
    good = "set -u\nTRAIN=${TRAIN:-~/data/train.parquet}"
