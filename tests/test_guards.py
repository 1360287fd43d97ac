"""Scripts are checked as they run when used correctly (issue 20, item 1).

A profile that stops at a guard on the script's inputs (`[ "$#" -lt 2 ] && exit 1`,
`${MODEL_PATH:?}`) is also followed with those inputs given, each unknown, and the
report says so; `--args` gives the positional arguments instead. A launch whose root
config is not here still has its overrides checked for Hydra's grammar.
"""

from __future__ import annotations

import json

from conftest import run_cli, write_file

LAUNCH = (
    "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
    'trainer.experiment_name="$NAME" trainer.total_epoch=2 "$@"\n'  # a typo, found only where the launch runs
)
GUARD = 'if [ "$#" -lt 2 ]; then\n    echo "usage: $0 NAME SAVE" >&2\n    exit 1\nfi\nNAME=$1\nSAVE=$2\nshift 2\n'


def report(capsys, *args) -> dict:
    return json.loads(run_cli(capsys, "--no-cache", "--format", "json", *args)[1])


def profiles(doc: dict) -> list[tuple]:
    return [(p["status"], [str(a.get("values")) for a in p["assumptions"]]) for p in doc["scripts"][0]["profiles"]]


def test_an_argument_count_guard_is_passed_with_the_arguments_given(tmp_path, capsys):
    path = write_file(tmp_path, "run.sh", "#!/usr/bin/env bash\n" + GUARD + LAUNCH)
    doc = report(capsys, path)
    assert profiles(doc) == [("rejected", []), ("launches", ["[2]"])]
    assert [(f["line"], f["rule"]) for f in doc["findings"]] == [(9, "override-missing-key")]
    assert doc["findings"][0]["profiles"] == [{}] and doc["findings"][0]["assumptions"] == [["2 positional arguments"]]
    launch = doc["scripts"][0]["profiles"][1]["launches"][0]
    assert launch["unknown_parts"][1] == ["trainer.experiment_name=", {"unknown": "$1"}]
    _, out, _ = run_cli(capsys, "--no-cache", path)
    assert "(profiles: 2 positional arguments)" in out and "is rejected" not in out


def test_a_required_variable_is_taken_as_set(tmp_path, capsys):
    text = '#!/usr/bin/env bash\nset -u\nNAME="${MODEL_NAME:?set MODEL_NAME}"\n' + LAUNCH
    doc = report(capsys, write_file(tmp_path, "run.sh", text))
    assert [a["subject"] for p in doc["scripts"][0]["profiles"] for a in p["assumptions"]] == ["MODEL_NAME"]
    assert [(f["line"], f["rule"]) for f in doc["findings"] if f["severity"] != "info"] == [(4, "override-missing-key")]


def test_a_functions_own_arguments_are_not_the_scripts(tmp_path, capsys):
    """bash gives each call of a function its own `$1`: `say hi` needs no argument of the script,
    so the use that passes the guard is assumed to set MODEL_NAME alone."""
    text = '#!/usr/bin/env bash\nset -u\nsay() { echo "$1" "$2"; }\nNAME="${MODEL_NAME:?set MODEL_NAME}"\nsay a b\n'
    doc = report(capsys, write_file(tmp_path, "run.sh", text + LAUNCH))
    assert [[a["subject"] for a in p["assumptions"]] for p in doc["scripts"][0]["profiles"]] == [[], ["MODEL_NAME"]]


def test_arguments_handed_to_a_function_are_the_scripts(tmp_path, capsys):
    """`main "$@"`: the guard in main is on the script's own arguments."""
    body = GUARD.replace("\n", "\n    ") + LAUNCH
    text = "#!/usr/bin/env bash\nmain() {\n    " + body + '}\nmain "$@"\n'
    doc = report(capsys, write_file(tmp_path, "run.sh", text))
    assert profiles(doc) == [("rejected", []), ("launches", ["[2]"])]


def test_args_gives_the_positional_arguments(tmp_path, capsys):
    path = write_file(tmp_path, "run.sh", "#!/usr/bin/env bash\n" + GUARD + LAUNCH)
    doc = report(capsys, "--args", "exp1 '/tmp/a b' trainer.nnodes=2", path)
    (profile,) = doc["scripts"][0]["profiles"]
    overrides = profile["launches"][0]["overrides"]
    assert "trainer.experiment_name=exp1" in overrides and overrides[-1] == "trainer.nnodes=2"
    assert run_cli(capsys, "--args", "'unclosed", path)[0] == 2


def test_a_guard_that_no_input_passes_stays_rejected(tmp_path, capsys):
    text = '#!/usr/bin/env bash\ncase "$DEVICE" in gpu|npu) ;; *) exit 1 ;; esac\n' + LAUNCH.replace("$NAME", "x")
    doc = report(capsys, "--profile", "DEVICE=tpu", write_file(tmp_path, "run.sh", text))
    assert profiles(doc) == [("rejected", [])]


def test_a_recipe_without_its_source_is_found_and_its_grammar_checked(tmp_path, capsys):
    """verl's recipes (`python3 -m recipe.dapo.main_dapo`) are launches; where the recipe/ folder
    is not here the root config is not known, but Hydra's grammar still holds."""
    text = (
        "#!/usr/bin/env bash\npython3 -m recipe.dapo.main_dapo --config-name=dapo_trainer \\\n"
        '    data.train_files="<path to your data>" \\\n    trainer.total_epoch=2 "$@"\n'
    )
    doc = report(capsys, write_file(tmp_path, "run.sh", text))
    found = sorted((f["line"], f["rule"], f["severity"]) for f in doc["findings"])
    assert found == [(2, "config-path", "info"), (3, "override-syntax", "error")]
    assert doc["scripts"][0]["profiles"][0]["status"] == "launches"
