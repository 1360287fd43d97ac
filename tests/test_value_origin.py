"""A value's finding says where the value was made (value_origin.py; issue 44, item 6)."""

from __future__ import annotations

import json

import pytest

from verl_preflight.app.cli import main

HEAD = "#!/usr/bin/env bash\nPROMPTS=128\nROLLOUT_N=5\n"
LAUNCH = (
    "ARGS=(\n  algorithm.adv_estimator=grpo\n  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1\n"
    "  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1\n  actor_rollout_ref.actor.ppo_mini_batch_size=4\n"
    "  data.train_batch_size=$GEN_BS\n)\n"
    'python3 -m verl.trainer.main_ppo "${ARGS[@]}"\n'
)


def _batch(tmp_path, capsys, assignments: str) -> dict:
    script = tmp_path / "run.sh"
    script.write_text(HEAD + assignments + LAUNCH)
    main(["--no-cache", "--format", "json", str(script)])
    [f] = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "batch-dispatch"]
    return f


def test_the_one_assignment_of_the_value_is_named_with_its_arithmetic(tmp_path, capsys):
    f = _batch(tmp_path, capsys, "GEN_BS=$((PROMPTS * ROLLOUT_N / 32))\n")
    assert f["line"] == 10 and f["message"].endswith("(from GEN_BS=$((PROMPTS * ROLLOUT_N / 32)))"), f
    assert [(r["line"], r["column"]) for r in f["related"]] == [(4, 1)], f["related"]


@pytest.mark.parametrize(
    "assignments",
    [
        'GEN_BS=20\n[ "$FAST" = 1 ] && GEN_BS=12\n',  # two assignments: which one is not sure
        "for GEN_BS in 20; do :; done\n",  # a loop variable
        "GEN_BS=20\nGEN_BS=$GEN_BS\n",  # assigned again
    ],
)
def test_a_value_of_several_possible_assignments_is_not_attributed(tmp_path, capsys, assignments):
    f = _batch(tmp_path, capsys, assignments)
    assert "(from " not in f["message"] and not f["related"], f
