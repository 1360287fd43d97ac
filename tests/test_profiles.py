"""Profiles cover every arm, and every launch is checked or says why not (issue 20, items 1 and 2).

When a script's switches have more combinations than --max-profiles, the profiles
checked are rows of a covering array: every arm of every switch is taken and every
pair of values of two switches meets (every three, where that fits too), the same
rows on every run; the report says so. Labels name the fewest switches that tell a
profile apart. A script that names a verl entry point and has no checked launch says
why, in text and JSON.
"""

from __future__ import annotations

import itertools
import json
import shutil

import pytest
from conftest import run_cli, write_file

from verl_preflight.shell import covering
from verl_preflight.shell import profiles as prof

LAUNCH_ARGS = "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1"


def _pairs_met(rows, sizes) -> bool:
    return all(
        {(r[a], r[b]) for r in rows} == set(itertools.product(range(sizes[a]), range(sizes[b])))
        for a, b in itertools.combinations(range(len(sizes)), 2)
    )


@pytest.mark.parametrize(
    "sizes", [[2, 2, 2], [3, 3, 3, 3], [4, 4, 3, 3, 2, 2, 2], [2] * 12, [5, 2, 3, 2], [3] * 13, [6, 2, 2]]
)
def test_a_pairwise_array_meets_every_pair_and_starts_with_the_defaults(sizes):
    rows = covering.covering(sizes, 2)
    assert _pairs_met(rows, sizes)
    assert rows[0] == [0] * len(sizes)  # the script's defaults are always checked
    assert rows == covering.covering(sizes, 2)  # the same rows every time
    largest = sorted(sizes)[-2:]
    assert len(rows) <= 2.5 * largest[0] * largest[1]  # at least this product is needed; greedy stays near it


def test_a_triple_array_meets_every_triple():
    sizes = [3, 2, 2, 2, 2]
    rows = covering.covering(sizes, 3)
    assert covering.met(rows, sizes, 3) == covering.tuples_of(sizes, 3)
    assert len(rows) < 3 * 2 * 2 * 3


def _dims(sizes):
    return [prof.Dimension(f"S{i}", [f"v{j}" for j in range(n)]) for i, n in enumerate(sizes)]


def test_every_combination_when_they_fit():
    chosen = prof.choose(_dims([2, 3]), 64)
    assert chosen.exhaustive and not chosen.capped and chosen.summary() is None
    assert [tuple(p.values()) for p in chosen.profiles] == list(itertools.product(["v0", "v1"], ["v0", "v1", "v2"]))


def test_more_combinations_than_the_budget_are_covered_pairwise_and_said_so():
    chosen = prof.choose(_dims([4, 4, 3, 3, 2, 2, 2]), 24)
    assert len(chosen.profiles) <= 24 and chosen.total == 1152
    assert chosen.arms and chosen.pairs_met == chosen.pairs and not chosen.capped
    assert chosen.summary() == (
        f"every arm covered and every pair of switch values meets ({len(chosen.profiles)} of 1,152 "
        "combinations of 7 switches)"
    )
    assert chosen.as_json()["strength"] == 2 and chosen.as_json()["capped"] is False


def test_three_switches_together_when_the_budget_allows():
    chosen = prof.choose(_dims([2, 2, 2, 2, 2, 2]), 64)  # 64 combinations: every one fits
    assert chosen.exhaustive
    chosen = prof.choose(_dims([2] * 8), 64)
    assert chosen.strength == 3 and "every triple of switch values meets" in chosen.summary()


def test_what_cannot_be_covered_is_capped_and_says_what_would_cover_it():
    chosen = prof.choose(_dims([2, 2, 3]), 4)  # each of 3 arms with each of 2: 6 profiles at least
    assert chosen.capped and chosen.arms and len(chosen.profiles) == 4
    assert chosen.summary() == (
        f"every arm covered, only {chosen.pairs_met} of 16 pairs of switch values meet "
        "(4 of 12 combinations of 3 switches; --max-profiles 6 covers them)"
    )
    assert not prof.choose(_dims([2, 2, 2]), 4).capped  # three two-way switches: 4 profiles meet every pair
    many = prof.choose(_dims([7]), 4)
    assert many.capped and not many.arms and many.summary().startswith("not every arm covered")


def test_labels_name_the_fewest_switches_that_tell_profiles_apart():
    envs = [dict(zip("ABC", row, strict=True)) for row in ("000", "011", "101", "110")]
    assert prof.labels(envs) == [{"A": "0", "B": "0"}, {"A": "0", "B": "1"}, {"A": "1", "B": "0"}, {"A": "1", "B": "1"}]
    # a profile merged over ENGINE (it has no ENGINE) may be either: ENGINE alone tells nothing apart from it
    merged = [{"DEVICE": "gpu"}, {"DEVICE": "npu", "ENGINE": "fsdp"}, {"DEVICE": "npu", "ENGINE": "megatron"}]
    assert prof.labels(merged) == merged
    assert prof.labels([{"DEVICE": "gpu", "X": "1"}]) == [{"DEVICE": "gpu", "X": "1"}]  # one profile: as it is


MANY = (
    "#!/usr/bin/env bash\n"
    "DEVICE=${DEVICE:-gpu}\nENGINE=${ENGINE:-fsdp}\nROLLOUT=${ROLLOUT:-vllm}\nACTOR_PP=${ACTOR_PP:-1}\n"
    "ACTOR_TP=${ACTOR_TP:-1}\nOFFLOAD=${OFFLOAD:-False}\nMODE=${MODE:-sync}\nARGS=()\n"
    'case "$DEVICE" in gpu) ARGS+=(trainer.n_gpus_per_node=8) ;; npu) ARGS+=(trainer.device=npu) ;; esac\n'
    'case "$ENGINE" in fsdp) ;; megatron) ARGS+=(+x.megatron=1) ;; fsdp2) ARGS+=(+x.fsdp2=1) ;; esac\n'
    'case "$ROLLOUT" in vllm) ;; sglang) ARGS+=(actor_rollout_ref.rollout.name=sglang) ;; esac\n'
    'if [ "$ACTOR_PP" -eq 2 ]; then ARGS+=(+x.pp=2); elif [ "$ACTOR_PP" -eq 4 ]; then ARGS+=(+x.pp=4); fi\n'
    'if [ "$ACTOR_TP" -eq 2 ]; then ARGS+=(+x.tp=2); elif [ "$ACTOR_TP" -eq 8 ]; then ARGS+=(+x.tp=8); fi\n'
    'if [ "$OFFLOAD" = True ]; then ARGS+=(+x.offload=1); fi\n'
    'if [ "$MODE" = async ]; then ARGS+=(+x.async=1); fi\n'
    f'python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} "${{ARGS[@]}}" "$@"\n'
)


def test_a_script_of_many_switches_is_not_capped_and_the_report_says_what_is_covered(tmp_path, capsys):
    path = write_file(tmp_path, "many.sh", MANY)
    code, out, _ = run_cli(capsys, "--no-cache", "--format", "json", path)
    doc = json.loads(out)
    (script,) = doc["scripts"]
    coverage = script["coverage"]
    assert coverage["combinations"] == 2 * 3 * 2 * 3 * 3 * 2 * 2 == 432
    assert coverage["every_arm"] and coverage["pairs_met"] == coverage["pairs"] and not coverage["capped"]
    assert len(script["profiles"]) == coverage["profiles"] <= 64
    assert not [f for f in doc["findings"] if f["rule"] == "profiles-capped"]
    seen = {(k, v) for p in script["profiles"] for k, v in p["env"].items()}
    assert {("ENGINE", "fsdp2"), ("ACTOR_PP", "4"), ("ACTOR_TP", "8"), ("MODE", "async")} <= seen
    labels = [p["label"] for p in script["profiles"]]
    assert len(set(labels)) == len(labels) and all(len(lb.split()) < 7 for lb in labels)
    _, text, _ = run_cli(capsys, "--no-cache", path)
    covered = f"every triple of switch values meets ({coverage['profiles']} of 432 combinations of 7 switches)"
    assert "many.sh: note: profiles checked: every arm covered and " + covered in text


@pytest.mark.slow
def test_the_same_profiles_on_every_run_and_for_any_jobs(tmp_path, capsys):
    paths = [write_file(tmp_path, f"many{i}.sh", MANY) for i in range(8)]

    def envs(*jobs):
        out = run_cli(capsys, "--no-cache", "--format", "json", *jobs, *paths)[1]
        return [[p["env"] for p in s["profiles"]] for s in json.loads(out)["scripts"]]

    one = envs("-j", "1")
    assert one == envs("-j", "2") and all(e == one[0] for e in one)


def test_an_entry_point_reached_through_word_splitting_is_a_launch(tmp_path, capsys):
    text = (
        "#!/usr/bin/env bash\n"
        'ENTRY="-m verl.trainer.sft_trainer"\n'
        "torchrun --nproc_per_node=8 $ENTRY trainer.total_epochs=1 \"$@\"\n"
        'python3 $ENTRY trainer.total_epochs=2 "$@"\n'
        'PPO="-mverl.trainer.main_ppo"\n'
        f'python3 $PPO {LAUNCH_ARGS} trainer.total_epochs=3 "$@"\n'
    )
    doc = json.loads(run_cli(capsys, "--no-cache", "--format", "json", write_file(tmp_path, "split.sh", text))[1])
    launches = [(la["line"], la["module"], la["overrides"][-1]) for la in doc["scripts"][0]["profiles"][0]["launches"]]
    assert launches == [
        (3, "verl.trainer.sft_trainer", "trainer.total_epochs=1"),
        (4, "verl.trainer.sft_trainer", "trainer.total_epochs=2"),
        (6, "verl.trainer.main_ppo", "trainer.total_epochs=3"),
    ]
    assert doc["scripts"][0]["unchecked"] is None


def unchecked(capsys, tmp_path, text: str, *args) -> tuple[dict | None, str]:
    path = write_file(tmp_path, "run.sh", text)
    doc = json.loads(run_cli(capsys, "--no-cache", "--format", "json", *args, path)[1])
    out = run_cli(capsys, "--no-cache", *args, path)[1]
    return doc["scripts"][0]["unchecked"], out


PPO = f'python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} "$@"\n'


def test_every_profile_exits_before_the_launch(tmp_path, capsys):
    note, out = unchecked(capsys, tmp_path, '#!/usr/bin/env bash\necho "moved to run_new.sh" >&2\nexit 1\n' + PPO)
    assert note == {
        "line": 4,
        "column": 12,
        "module": "verl.trainer.main_ppo",
        "why": "no profile reaches it: every profile exits at line 3 (`exit 1`)",
        "message": "names verl.trainer.main_ppo at line 4 but no profile reaches it: "
        "every profile exits at line 3 (`exit 1`)",
    }
    assert "run.sh: note: names verl.trainer.main_ppo at line 4 but no profile reaches it" in out
    assert "is rejected" not in out  # the note above says it


def test_a_usage_guard_that_the_given_arguments_do_not_pass(tmp_path, capsys):
    text = (
        "#!/usr/bin/env bash\nusage() {\n    echo \"usage: $0 MODEL SAVE\" >&2\n    exit 2\n}\n"
        '[ "$#" -lt 2 ] && usage\n' + PPO
    )
    note, _ = unchecked(capsys, tmp_path, text, "--args", "only-one")
    assert note["why"] == "no profile reaches it: every profile exits at line 4 (`exit 2`, in usage() called at line 6)"
    note, _ = unchecked(capsys, tmp_path, text)  # used correctly (two arguments, unknown): checked
    assert note is None


def test_a_launch_built_by_eval_of_text_known_only_at_run_time(tmp_path, capsys):
    text = '#!/usr/bin/env bash\nCMD="python3 -m verl.trainer.main_ppo $(cat extra_args.txt)"\neval "$(cat cmd.txt)"\n'
    note, out = unchecked(capsys, tmp_path, text)
    assert note["why"] == "no profile reaches it: the launch is built by eval of text known only at run time (line 3)"
    assert note["line"] == 2


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            "#!/usr/bin/env bash\ncat > job.sh <<EOF\npython3 -m verl.trainer.main_ppo trainer.nnodes=1\nEOF\n"
            "sbatch job.sh\n",
            "it is in a here-document (line 3): text the script writes, not a command",
        ),
        (
            '#!/usr/bin/env bash\ntrain() {\n    python3 -m verl.trainer.main_ppo trainer.nnodes=1 "$@"\n}\n'
            "echo done\n",
            "it is in function train (line 2), which the script never calls",
        ),
        (
            '#!/usr/bin/env bash\n# python3 -m verl.trainer.fsdp_sft_trainer in a comment is no mention\n'
            'echo "then run: python3 -m verl.trainer.main_ppo"\n',
            "it is only printed (`echo` at line 3)",
        ),
    ],
    ids=["heredoc", "function-never-called", "printed"],
)
def test_text_that_names_an_entry_point_but_never_runs(tmp_path, capsys, text, why):
    note, _ = unchecked(capsys, tmp_path, text)
    assert note["why"] == "no profile reaches it: " + why


def test_a_launch_whose_config_folder_is_not_here_says_so(tmp_path, capsys):
    text = "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo --config-path=/nonexistent/conf --config-name=mine"
    note, out = unchecked(capsys, tmp_path, text + ' "$@"\n')
    assert note["why"] == "its launch there is not checked: /nonexistent/conf is not here"
    text = '#!/usr/bin/env bash\npython3 -m recipe.dapo.main_dapo trainer.nnodes=1 "$@"\n'
    note, _ = unchecked(capsys, tmp_path, text)
    assert note["why"].startswith("its launch there is not checked: recipe.dapo.main_dapo has no source here (no ")


def test_a_config_name_given_as_an_argument_says_how_to_give_it(tmp_path, capsys):
    text = '#!/usr/bin/env bash\nset -u\nCONFIG_NAME="$1"\n'
    text += 'python3 -m verl.trainer.main_ppo --config-name "$CONFIG_NAME" x=1\n'
    note, _ = unchecked(capsys, tmp_path, text)
    assert note["why"] == (
        "its launch there is not checked: --config-name is known only at run time "
        "(it is an argument of the script: --args gives them)"
    )
    assert unchecked(capsys, tmp_path, text, "--args", "ppo_trainer")[0] is None


def test_a_script_that_names_no_entry_point_has_no_note(tmp_path, capsys):
    note, out = unchecked(capsys, tmp_path, "#!/usr/bin/env bash\npython3 train.py --lr 1e-6\n")
    assert note is None and "no verl launch in any profile" in out


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_exit_line_is_where_bash_exits(tmp_path):
    """The line the note names is the one real bash exits at (`bash -x` shows the last command)."""
    import subprocess

    text = 'usage() {\n  echo usage >&2\n  exit 3\n}\nif [ "$#" -lt 1 ]; then usage; fi\n' + PPO
    path = write_file(tmp_path, "run.sh", text)
    traced = ["bash", "-c", 'PS4="+\\${LINENO}: "; set -x; source "$0"', path]  # each command with its line
    run = subprocess.run(traced, capture_output=True, text=True)
    assert run.returncode == 3 and run.stderr.strip().splitlines()[-1] == "++3: exit 3"
    from verl_preflight.pipeline.launches import launch_of
    from verl_preflight.shell.evaluate import evaluate
    from verl_preflight.shell.parse import parse_script

    (outcome,) = evaluate(parse_script(path, text.encode()), {}, set(), launch_of)
    where, why, via = outcome.ended
    assert (where.line, why, via[0], via[1].line) == (3, "`exit 3`", "usage", 5)


@pytest.mark.parametrize(
    "condition,truth,words",
    [
        ('[ "${VERL_USE_UV:-1}" != 0 ] && [ "${DEVICE:-gpu}" = gpu ]', True, "VERL_USE_UV!=0, DEVICE=gpu or unset"),
        ('[ -z "${DUMMY_MODEL_CONFIG_PATH}" ]', True, "DUMMY_MODEL_CONFIG_PATH empty"),
        ('[ -z "$N_NODES" ] || [ -z "$N_GPUS" ]', False, "N_NODES set, N_GPUS set"),
        ('[[ -n "$SLURM_SUBMIT_DIR" && -d "$SLURM_SUBMIT_DIR" ]]', True, "SLURM_SUBMIT_DIR set, $SLURM_SUBMIT_DIR is a folder"),
        ("[ $SPLIT_EXIT_CODE -eq 0 ]", False, "SPLIT_EXIT_CODE!=0"),
        ("nvidia-smi > /dev/null 2>&1", True, "`nvidia-smi` succeeds"),
        ("! nvidia-smi >/dev/null", False, "`nvidia-smi` succeeds"),
        ('[ "$file_size" -lt "$min_size" ]', False, '[[ "$file_size" -lt "$min_size" ]] is false'),  # as written
    ],
)
def test_a_profile_names_its_conditions_in_the_words_of_the_scripts_switches(condition, truth, words):
    """Issue 44, item 6: `[ "${VERL_USE_UV:-1}" != 0 ] && ... is true` read as the switches say it."""
    from verl_preflight.core.values import Assumption

    shown = str(Assumption(condition, "true" if truth else "false"))
    assert shown == words.replace("[[", "[").replace("]]", "]")


def test_a_profile_label_drops_a_condition_on_a_switch_it_sets():
    from verl_preflight.core.values import Assumption, Profile

    profile = Profile.of(
        {"VERL_USE_UV": "1", "DEVICE": None},
        [Assumption('[ "${VERL_USE_UV:-1}" != 0 ]', "true"), Assumption('[ "${DEVICE:-gpu}" = gpu ]', "true")],
    )
    assert profile.describe() == "VERL_USE_UV=1, DEVICE unset, DEVICE=gpu or unset"


def test_rejected_profiles_are_one_note_a_script():
    """Issue 44, item 6: a script's rejected profiles in one note, the list bounded (JSON has them all)."""
    from verl_preflight.report.text import MAX_LISTED, _some_profiles
    from verl_preflight.core.values import Profile

    three = [Profile.of({"MODE": m}) for m in "abc"]
    assert _some_profiles(three, "is rejected", "are rejected") == "3 profiles are rejected (MODE=a; MODE=b; MODE=c)"
    assert _some_profiles(three[:1], "is rejected", "are rejected") == "profile MODE=a is rejected"
    many = [Profile.of({"A_LONG_SWITCH_NAME": str(n), "ANOTHER_ONE": "x"}) for n in range(40)]
    said = _some_profiles(many, "is rejected", "are rejected")
    assert said.startswith("40 profiles are rejected (A_LONG_SWITCH_NAME=0, ANOTHER_ONE=x; ") and said.endswith(" more)")
    assert len(said) < MAX_LISTED + 60
