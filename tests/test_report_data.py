"""Reports print a script's values as data: secrets masked, control characters escaped (issue 24, item 5).

Each case runs the command line on a script and reads what each format prints."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from verl_preflight.shell.evaluate import secret_values

LAUNCH = (
    "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 {} \"$@\"\n"
)
TOKEN = "hf_q8ZsecretValue1234"
FORMATS = ["text", "json", "sarif", "github"]


def _script(tmp_path, body: str, overrides: str) -> str:
    path = tmp_path / "run.sh"
    path.write_text("#!/usr/bin/env bash\n" + body + LAUNCH.format(overrides))
    return str(path)


@pytest.fixture
def leaky(tmp_path):
    (tmp_path / "env.sh").write_text(f"export HF_TOKEN={TOKEN}\n")
    return _script(tmp_path, 'source "$(dirname "$0")/env.sh"\n', "actor_rollout_ref.actor.ppo_epochs=$HF_TOKEN")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_secret_from_a_sourced_file_is_masked(fmt, leaky, capsys):
    code, out, err = run_cli(capsys, "--no-cache", "--format", fmt, leaky)
    assert code == 0  # the finding is a warning
    assert TOKEN not in out + err
    assert "ppo_epochs=***" in out


def test_show_secrets_prints_them(leaky, capsys):
    _, out, _ = run_cli(capsys, "--no-cache", "--show-secrets", leaky)
    assert f"ppo_epochs={TOKEN}" in out


def test_render_masks_secrets_too(leaky, capsys):
    _, out, _ = run_cli(capsys, "render", "--no-cache", leaky)
    assert TOKEN not in out and "ppo_epochs=***" in out


def test_a_cached_result_is_masked_the_same(leaky, capsys):
    first = run_cli(capsys, "--format", "json", leaky)[1]
    assert run_cli(capsys, "--format", "json", leaky)[1] == first
    assert TOKEN not in first


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u009b6n\u202eevil"


@pytest.mark.parametrize("fmt", FORMATS)
def test_escape_sequences_never_reach_the_terminal(fmt, tmp_path, capsys):
    path = _script(tmp_path, "NAME=$'\\e]0;pwned\\a\\e[2J\\u009b6n\\u202eevil'\n", 'trainer.experiment_nam="$NAME"')
    code, out, err = run_cli(capsys, "--no-cache", "--format", fmt, path)
    assert code == 1
    for raw in ("\x1b", "\x07", "\u009b", "\u202e"):
        assert raw not in out and raw not in err
    if fmt in ("json", "sarif"):  # the same data, written with JSON's escapes
        assert "\\u001b]0;pwned\\u0007" in out
        json.loads(out)
    else:
        assert "\\x1b]0;pwned\\x07\\x1b[2J" in out


def test_colour_codes_of_the_report_itself_are_kept(tmp_path, capsys):
    path = _script(tmp_path, "NAME=$'\\e[2J'\n", 'trainer.experiment_nam="$NAME"')
    _, out, _ = run_cli(capsys, "--no-cache", "--color", "always", path)
    assert "\x1b[1;31merror\x1b[0m" in out
    assert "\x1b[2J" not in out and "\\x1b[2J" in out


def test_a_newline_in_a_value_cannot_forge_a_finding(tmp_path, capsys):
    path = _script(
        tmp_path, "V=$'1\\nrun.sh:1:1: error: forged [x]'\n", 'actor_rollout_ref.actor.ppo_epoch="$V"'
    )
    _, out, _ = run_cli(capsys, "--no-cache", path)
    assert not [line for line in out.splitlines() if line.startswith("run.sh:1:1: error: forged")]
    assert "\\nrun.sh:1:1: error: forged" in out
    _, out, _ = run_cli(capsys, "--no-cache", "--format", "github", path)
    assert len([line for line in out.splitlines() if line.startswith("::")]) == len(out.splitlines())


def test_which_values_are_secrets():
    found = secret_values(
        {
            "HF_TOKEN": TOKEN,
            "WANDB_API_KEY": "0123abcd0123abcd",
            "DB_PASSWORD": "hunter2",
            "GH_PAT": "ghp_x1y2z3",
            "USE_KEY_CACHE": "True",  # a switch, not a secret
            "KEY_BITS": "2048",
            "MY_SECRET": "abc",  # too short to mask without hiding other text
            "MODEL_PATH": "/models/qwen",  # not a secret name
        }
    )
    assert found == {TOKEN, "0123abcd0123abcd", "hunter2", "ghp_x1y2z3"}


# ---- issue 44: masked as a secret scanner would, never text inside keys or words -------------


def test_a_secret_is_a_secret_name_with_a_credential_value():
    not_secrets = {
        "PROMPT_KEY": "prompt",
        "REWARD_KEY_NAME": "reward_score",
        "TOKENIZER_PATH": "/models/Qwen3-8B",
        "API_KEY": "TO_BE_FILLED",
        "WANDB_API_KEY": "YOUR_WANDB_API_KEY",
        "HF_TOKEN": "your-token-here",
        "SECRET_FILE": "/run/secrets/token.txt",
        "KEY_BITS": "2048",
    }
    assert secret_values(not_secrets) == frozenset()
    credentials = {
        "HF_TOKEN": "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345",
        "OPENAI_API_KEY": "sk-proj-9fK2mQ7xLp4RtZ8vBn3Wc",
        "GITHUB_TOKEN": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
        "SERVICE_KEY": "Zx8Qp2Lr7Vn4Tk9Wm3Hs6Jd1Fb5Gc0Ya",
    }
    assert secret_values(credentials) == frozenset(credentials.values())


def test_what_is_not_masked_is_printed_as_bash_made_it(tmp_path, capsys):
    """`PROMPT_KEY=prompt`: `data.prompt_key=prompt` is printed whole (it was `data.***_key=***`),
    the same as --show-secrets prints it; a credential is masked where it stands as a value."""
    key = "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
    body = f'PROMPT_KEY=prompt\nTOKENIZER_PATH=/models/tok\nexport HF_TOKEN={key}\n'
    script = _script(
        tmp_path, body, 'data.prompt_key=$PROMPT_KEY data.train_files=$TOKENIZER_PATH/x +trainer.hf_token="$HF_TOKEN"'
    )
    shown = {}
    for flag in ((), ("--show-secrets",)):
        code, out, _ = run_cli(capsys, "--no-cache", "--format", "json", *flag, script)
        (launch,) = json.loads(out)["scripts"][0]["profiles"][0]["launches"]
        shown[flag] = launch["overrides"]
    plain, revealed = shown[()], shown[("--show-secrets",)]
    assert plain[3:5] == revealed[3:5] == ["data.prompt_key=prompt", "data.train_files=/models/tok/x"]
    assert plain[5] == "+trainer.hf_token=***" and revealed[5] == f"+trainer.hf_token={key}"


@pytest.mark.slow
def test_the_corpora_print_every_override_as_bash_made_it(capsys):
    """On ../shared/corpus (three verl trees, Logic-RL and seven projects built on verl), masking
    changes no override: every one equals what --show-secrets prints."""
    import os

    from conftest import SHARED

    corpus = os.path.join(SHARED, "corpus")
    if not os.path.isdir(corpus):
        pytest.skip("../shared/corpus is absent (a fresh clone has no ../shared)")
    launches = []
    for flag in ((), ("--show-secrets",)):
        _, out, _ = run_cli(capsys, "--format", "json", *flag, corpus)  # (the second reads the first's results)
        doc = json.loads(out)
        launches.append([la["overrides"] for s in doc["scripts"] for p in s["profiles"] for la in p["launches"]])
    assert len(launches[0]) > 700 and launches[0] == launches[1]
