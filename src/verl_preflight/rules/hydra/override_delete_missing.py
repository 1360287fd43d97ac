"""`~key` on a key that does not exist (or is null)."""

from __future__ import annotations

from .. import Rule


class OverrideDeleteMissing(Rule):
    id = "override-delete-missing"
    severity = "error"
    stage = "hydra"
    summary = "`~key` on a key that does not exist (or is null)"
    why = "Hydra refuses to delete what is not there."
    bad = "~trainer.no_such_key"
    good = "~trainer.val_before_train"
