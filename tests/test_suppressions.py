"""`# validate-scripts: disable=RULE` on the line or the line above; disable-file; unused ones warn."""

from __future__ import annotations

import json

from verl_preflight.app.cli import main

SCRIPT = """\
#!/usr/bin/env bash
{file_directive}
ARGS=(
    trainer.total_epochs=1
    {line_directive}
    trainer.total_epochs=2
)
python3 -m verl.trainer.main_ppo "${{ARGS[@]}}" actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=8 data.train_batch_size=16 "$@"
"""


def rules_for(tmp_path, capsys, file_directive="", line_directive=""):
    p = tmp_path / "s.sh"
    p.write_text(SCRIPT.format(file_directive=file_directive, line_directive=line_directive))
    main(["--format", "json", str(p)])
    return [(f["rule"], f["line"]) for f in json.loads(capsys.readouterr().out)["findings"]]


def test_finding_without_directive(tmp_path, capsys):
    assert rules_for(tmp_path, capsys) == [("duplicate-key", 6)]


def test_line_above_silences(tmp_path, capsys):
    assert rules_for(tmp_path, capsys, line_directive="# validate-scripts: disable=duplicate-key") == []


def test_file_directive_silences(tmp_path, capsys):
    assert rules_for(tmp_path, capsys, file_directive="# validate-scripts: disable-file=duplicate-key") == []


def test_unused_directive_warns(tmp_path, capsys):
    found = rules_for(tmp_path, capsys, file_directive="# validate-scripts: disable-file=parallelism")
    assert ("unused-suppression", 2) in found and ("duplicate-key", 6) in found
