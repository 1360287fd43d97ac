"""Layout and length rules decided by the launch's verl version (issue 20, item 3).

sequence-length, micro-batch-split, batch-dispatch and parallelism's wide-TP
warning read the code of the verl the launch is checked against. Each case runs
the same script against the installed verl 0.9.1 and the corpus trees of v0.7.0
and v0.4.1 (whole packages), and verl 0.8.0 from its wheel where it matters;
the outcome must follow what that version's code does. Tests that need
../shared skip when it is absent.
"""

from __future__ import annotations

import ast
import json
import os

import pytest
from conftest import ROOT, SHARED
from conftest import run_cli as run

from verl_preflight.sources.pyeval import UNKNOWN, Evaluator, Node, Obj, V

CORPUS = os.path.join(SHARED, "corpus")
TREES = {
    "0.7.0": os.path.join(CORPUS, "verl-v0.7.0", "verl", "trainer", "config"),
    "0.4.1": os.path.join(CORPUS, "verl-v0.4.1", "verl", "trainer", "config"),
}
WHEELS = os.path.join(ROOT, ".venv", "wheels")
needs_corpus = pytest.mark.skipif(not os.path.isdir(CORPUS), reason="../shared/corpus is absent")


def findings(
    capsys,
    tmp_path,
    version: str,
    overrides: list[str],
    env: str = "",
    rule: str | None = None,
    config_name: str | None = None,
):
    """The findings of one launch of verl.trainer.main_ppo with these overrides, at a verl version."""
    path = tmp_path / "run.sh"
    lines = "\n".join(f"    {o}" for o in overrides)
    name = f" --config-name={config_name}" if config_name else ""
    path.write_text(
        f"#!/usr/bin/env bash\nset -euo pipefail\n{env}\nARGS=(\n{lines}\n)\n"
        f'python3 -m verl.trainer.main_ppo{name} "${{ARGS[@]}}" "$@"\n'
    )
    argv = ["--format", "json", "--no-cache"]
    if version in TREES:
        if not os.path.isdir(TREES[version]):
            pytest.skip("../shared/corpus is absent")
        argv += ["--verl-config", TREES[version]]
    elif version != "0.9.1":
        if not os.path.isfile(os.path.join(WHEELS, f"verl-{version}-py3-none-any.whl")):
            pytest.skip(f"no verl {version} wheel in .venv/wheels (make setup)")
        os.environ["VERL_PREFLIGHT_WHEELS"] = WHEELS
        argv += ["--verl", version]
    code, out, _ = run(capsys, *argv, str(path))
    assert code in (0, 1)
    found = json.loads(out)["findings"]
    return [f for f in found if rule is None or f["rule"] == rule]


def line_of(tmp_path, text: str) -> int:
    for number, line in enumerate((tmp_path / "run.sh").read_text().splitlines(), start=1):
        if text in line:
            return number
    raise AssertionError(text)


BASE = [
    "algorithm.adv_estimator=grpo",
    "actor_rollout_ref.model.path=/models/Qwen3-30B-A3B",
    "actor_rollout_ref.actor.use_kl_loss=False",
    "actor_rollout_ref.rollout.name=vllm",
    "trainer.nnodes=1",
    "trainer.n_gpus_per_node=8",
]
DYNAMIC = [
    "data.train_batch_size=64",
    "actor_rollout_ref.actor.ppo_mini_batch_size=16",
    "actor_rollout_ref.actor.use_dynamic_bsz=True",
    "actor_rollout_ref.rollout.n=4",
]


# ---- sequence-length: the dynamic batch's token budget ---------------------------------


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        ("0.9.1", "warning"),
        pytest.param("0.7.0", "error", marks=needs_corpus),
        pytest.param("0.4.1", "error", marks=needs_corpus),
    ],
)
def test_token_budget_below_prompt_plus_response(capsys, tmp_path, version, severity):
    """verl 0.9.1 hands the workers nested batches and compares with the longest sample (a
    warning); v0.7.0's legacy workers and v0.4.1 compare with the padded width (an error)."""
    over = [
        *BASE,
        *DYNAMIC,
        "data.max_prompt_length=1024",
        "data.max_response_length=8192",
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=8192",
    ]
    got = findings(capsys, tmp_path, version, over, rule="sequence-length")
    budget = [f for f in got if "ppo_max_token_len_per_gpu" in f["message"]]
    assert len(budget) == 1, got  # the rollout's log-prob budget inherits it: one finding
    assert budget[0]["severity"] == severity
    assert budget[0]["line"] == line_of(tmp_path, "ppo_max_token_len_per_gpu=8192")
    assert "actor update and actor log-prob" in budget[0]["message"]


@needs_corpus
def test_v070_engine_workers_measure_the_longest_sample(capsys, tmp_path):
    over = [
        *BASE,
        *DYNAMIC,
        "data.max_response_length=8192",
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=8192",
        "trainer.use_legacy_worker_impl=disable",
    ]
    got = [
        f for f in findings(capsys, tmp_path, "0.7.0", over, rule="sequence-length") if "max_token_len" in f["message"]
    ]
    assert [f["severity"] for f in got] == ["warning"]


@pytest.mark.parametrize("version", ["0.9.1", pytest.param("0.4.1", marks=needs_corpus)])
def test_ulysses_sequence_parallel_multiplies_the_budget(capsys, tmp_path, version):
    over = [
        *BASE,
        *DYNAMIC,
        "data.max_prompt_length=1024",
        "data.max_response_length=8192",
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=8192",
        "actor_rollout_ref.actor.ulysses_sequence_parallel_size=2",
    ]
    got = [
        f for f in findings(capsys, tmp_path, version, over, rule="sequence-length") if "max_token_len" in f["message"]
    ]
    assert not got  # 8192 x 2 >= 9216


@pytest.mark.parametrize("version", ["0.9.1", pytest.param("0.4.1", marks=needs_corpus)])
def test_budget_without_dynamic_batch_size_is_not_checked(capsys, tmp_path, version):
    over = [
        *BASE,
        "data.max_response_length=8192",
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=1024",
        "actor_rollout_ref.actor.use_dynamic_bsz=False",
    ]
    got = [
        f for f in findings(capsys, tmp_path, version, over, rule="sequence-length") if "max_token_len" in f["message"]
    ]
    assert not got


@needs_corpus
def test_ref_budget_counts_only_with_a_ref(capsys, tmp_path):
    over = [
        *BASE,
        *DYNAMIC,
        "data.max_response_length=4096",
        "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=2048",
    ]
    assert not [f for f in findings(capsys, tmp_path, "0.4.1", over, rule="sequence-length") if "ref" in f["message"]]
    over = [o.replace("use_kl_loss=False", "use_kl_loss=True") for o in over]
    got = [
        f for f in findings(capsys, tmp_path, "0.4.1", over, rule="sequence-length") if f["message"].startswith("ref")
    ]
    assert len(got) == 1 and got[0]["line"] == line_of(tmp_path, "log_prob_max_token_len_per_gpu=2048")


# ---- sequence-length: the vLLM engine -----------------------------------------------------


@needs_corpus
def test_v041_sync_rollout_asserts_the_model_context(capsys, tmp_path):
    """verl v0.4.1's sync vLLM rollout asserts max_position_embeddings (40960 for Qwen3-30B-A3B)
    >= prompt + response, unless the model has rope scaling."""
    over = [
        *BASE,
        "data.max_prompt_length=2048",
        "data.max_response_length=40960",
        "actor_rollout_ref.rollout.max_num_batched_tokens=65536",
    ]
    got = findings(capsys, tmp_path, "0.4.1", over, rule="sequence-length")
    assert [f["severity"] for f in got] == ["error"]
    assert "vllm_rollout_spmd.py:124" in got[0]["message"] and "AssertionError" in got[0]["message"]
    assert got[0]["line"] == line_of(tmp_path, "max_response_length=40960")


@needs_corpus
def test_v041_rope_scaling_lifts_verl_assert_and_vllm_scales_the_length(capsys, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps(
            {
                "num_hidden_layers": 48,
                "num_attention_heads": 32,
                "num_key_value_heads": 4,
                "max_position_embeddings": 40960,
                "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
            }
        )
    )
    over = [
        *BASE,
        "data.max_prompt_length=2048",
        "data.max_response_length=40960",
        "actor_rollout_ref.rollout.max_num_batched_tokens=65536",
    ]
    path = tmp_path / "run.sh"
    got = findings(capsys, tmp_path, "0.4.1", over, rule="sequence-length")
    assert got, "without --model-config the shipped shape has no rope scaling"
    code, out, _ = run(
        capsys,
        "--format",
        "json",
        "--no-cache",
        "--verl-config",
        TREES["0.4.1"],
        "--model-config",
        str(model),
        str(path),
    )
    assert not [f for f in json.loads(out)["findings"] if f["rule"] == "sequence-length"]  # 43008 <= 32768 x 4


@needs_corpus
def test_v041_chunked_prefill_needs_max_num_batched_tokens(capsys, tmp_path):
    """verl v0.4.1 raises when chunked prefill is on and max_num_batched_tokens (8192 by
    default) < max_model_len (prompt + response); with it off vLLM refuses the same."""
    over = [*BASE, "data.max_prompt_length=1024", "data.max_response_length=8192"]
    got = findings(capsys, tmp_path, "0.4.1", over, rule="sequence-length")
    assert [f["severity"] for f in got] == ["error"] and "vllm_rollout_spmd.py:129" in got[0]["message"]
    got = findings(
        capsys,
        tmp_path,
        "0.4.1",
        [*over, "actor_rollout_ref.rollout.enable_chunked_prefill=False"],
        rule="sequence-length",
    )
    assert [f["severity"] for f in got] == ["error"] and "vLLM refuses max_num_batched_tokens 8192" in got[0]["message"]
    assert got[0]["line"] == line_of(tmp_path, "enable_chunked_prefill=False")
    ok = findings(
        capsys,
        tmp_path,
        "0.4.1",
        [*over, "actor_rollout_ref.rollout.max_num_batched_tokens=9216"],
        rule="sequence-length",
    )
    assert not ok


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.9.1", None),  # verl raises max_num_batched_tokens to max_model_len itself
        ("0.8.0", None),  # verl drops the False flag: vLLM keeps chunked prefill on (a warning, below)
        pytest.param("0.7.0", None, marks=needs_corpus),
    ],
)
def test_chunked_prefill_off_after_v041(capsys, tmp_path, version, expected):
    over = [*BASE, "data.max_response_length=1024", "actor_rollout_ref.rollout.enable_chunked_prefill=False"]
    got = findings(capsys, tmp_path, version, over, rule="sequence-length")
    assert not [f for f in got if f["severity"] == "error"]
    dropped = [f for f in got if "drops a False flag" in f["message"]]
    assert bool(dropped) == (version in ("0.8.0", "0.7.0")), got


@pytest.mark.parametrize("version", ["0.9.1", "0.8.0"])
def test_max_model_len_above_the_model_is_refused(capsys, tmp_path, version):
    over = [*BASE, "actor_rollout_ref.rollout.max_model_len=65536"]
    got = findings(capsys, tmp_path, version, over, rule="sequence-length")
    assert [f["severity"] for f in got] == ["error"] and "ValueError" in got[0]["message"]
    assert got[0]["line"] == line_of(tmp_path, "max_model_len=65536")


@pytest.mark.parametrize("version", ["0.9.1", pytest.param("0.7.0", marks=needs_corpus)])
def test_responses_cut_at_the_model_context_are_a_warning(capsys, tmp_path, version):
    over = [*BASE, "data.max_prompt_length=2048", "data.max_response_length=40960"]
    got = findings(capsys, tmp_path, version, over, rule="sequence-length")
    assert [f["severity"] for f in got] == ["warning"] and "generation stops at 40960" in got[0]["message"]


@needs_corpus
def test_v070_overwrites_max_model_len(capsys, tmp_path):
    over = [*BASE, "actor_rollout_ref.rollout.max_model_len=4096"]
    got = findings(capsys, tmp_path, "0.7.0", over, rule="sequence-length")
    assert [f["severity"] for f in got] == ["warning"] and "does nothing" in got[0]["message"]
    assert not findings(capsys, tmp_path, "0.9.1", over, rule="sequence-length")


def test_sglang_rollout_is_not_judged_by_vllm(capsys, tmp_path):
    over = [o.replace("name=vllm", "name=sglang") for o in BASE] + ["actor_rollout_ref.rollout.max_model_len=65536"]
    assert not findings(capsys, tmp_path, "0.9.1", over, rule="sequence-length")


# ---- micro-batch-split ----------------------------------------------------------------------

STATIC = [
    "data.train_batch_size=64",
    "actor_rollout_ref.actor.ppo_mini_batch_size=16",
    "actor_rollout_ref.rollout.n=4",
    "trainer.n_gpus_per_node=16",
]


@pytest.mark.parametrize(
    "version", [pytest.param("0.4.1", marks=needs_corpus), pytest.param("0.7.0", marks=needs_corpus)]
)
@pytest.mark.parametrize("dynamic", ["False", "True"])
def test_legacy_normalized_mini_batch_against_the_micro_batch(capsys, tmp_path, version, dynamic):
    """v0.4.1 (and v0.7.0's legacy workers): ppo_mini_batch_size 16 x n 4 / 16 GPUs = 4, not
    divisible by ppo_micro_batch_size_per_gpu 3, asserted even with dynamic batch size on."""
    over = [
        *BASE,
        *STATIC,
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=3",
        f"actor_rollout_ref.actor.use_dynamic_bsz={dynamic}",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4",
    ]
    got = findings(capsys, tmp_path, version, over, rule="micro-batch-split")
    assert len(got) == 1 and got[0]["severity"] == "error"
    assert "normalized ppo_mini_batch_size 4 should be divisible by ppo_micro_batch_size_per_gpu 3" in got[0]["message"]
    assert "16 -> 64 -> 4" in got[0]["message"]
    assert got[0]["line"] == line_of(tmp_path, "ppo_mini_batch_size=16")


@needs_corpus
def test_v041_deprecated_micro_batch_divided_to_zero(capsys, tmp_path):
    """A global ppo_micro_batch_size of 8 over 16 GPUs becomes 0 a GPU: with dynamic batch size on,
    verl v0.4.1's `mini % 0` fails in the worker (validate_config checks it only with it off)."""
    over = [
        *BASE,
        *STATIC,
        "actor_rollout_ref.actor.ppo_micro_batch_size=8",
        "actor_rollout_ref.actor.use_dynamic_bsz=True",
    ]
    got = findings(capsys, tmp_path, "0.4.1", over, rule="micro-batch-split")
    assert len(got) == 1 and "ZeroDivisionError" in got[0]["message"]
    static = [o.replace("use_dynamic_bsz=True", "use_dynamic_bsz=False") for o in over]
    assert not findings(capsys, tmp_path, "0.4.1", static, rule="micro-batch-split")


@needs_corpus
def test_v041_log_prob_micro_batch_normalized_to_zero(capsys, tmp_path):
    over = [
        *BASE,
        *STATIC,
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size=8",
    ]
    got = findings(capsys, tmp_path, "0.4.1", over, rule="micro-batch-split")
    assert len(got) == 1 and "rollout.log_prob_micro_batch_size_per_gpu to 0" in got[0]["message"]
    assert got[0]["line"] == line_of(tmp_path, "log_prob_micro_batch_size=8")


def test_engine_mini_batch_over_data_parallel_ranks(capsys, tmp_path):
    """verl 0.9.1 asserts ppo_mini_batch_size x rollout.n % DP == 0 (10 x 4 over 16 ranks)."""
    over = [
        *BASE,
        "data.train_batch_size=64",
        "actor_rollout_ref.actor.ppo_mini_batch_size=10",
        "actor_rollout_ref.rollout.n=4",
        "trainer.n_gpus_per_node=16",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
    ]
    got = findings(capsys, tmp_path, "0.9.1", over, rule="micro-batch-split")
    assert len(got) == 1 and "engine_workers.py:267" in got[0]["message"]
    assert got[0]["line"] == line_of(tmp_path, "ppo_mini_batch_size=10")


@needs_corpus
def test_same_mini_batch_passes_v041_normalization(capsys, tmp_path):
    """The same launch in v0.4.1: 40 // 16 = 2 per GPU, divisible by 1: no finding."""
    over = [
        *BASE,
        "data.train_batch_size=64",
        "actor_rollout_ref.actor.ppo_mini_batch_size=10",
        "actor_rollout_ref.rollout.n=4",
        "trainer.n_gpus_per_node=16",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
    ]
    assert not findings(capsys, tmp_path, "0.4.1", over, rule="micro-batch-split")


# ---- batch-dispatch ---------------------------------------------------------------------------


@needs_corpus
def test_v041_sync_generation_splits_the_train_batch_over_every_rank(capsys, tmp_path):
    over = [
        *BASE,
        "data.train_batch_size=20",
        "actor_rollout_ref.actor.ppo_mini_batch_size=20",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.rollout.n=8",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
        "trainer.n_gpus_per_node=16",
    ]
    got = findings(capsys, tmp_path, "0.4.1", over, rule="batch-dispatch")
    assert len(got) == 1 and "train_batch_size = 20" in got[0]["message"] and "16 ranks" in got[0]["message"]
    assert got[0]["line"] == line_of(tmp_path, "train_batch_size=20")
    assert not findings(capsys, tmp_path, "0.4.1", over, env="export VERL_AUTO_PADDING=1", rule="batch-dispatch")
    asynchronous = [*over, "actor_rollout_ref.rollout.mode=async"]
    assert not findings(capsys, tmp_path, "0.4.1", asynchronous, rule="batch-dispatch")


@pytest.mark.parametrize("version", ["0.9.1", pytest.param("0.7.0", marks=needs_corpus)])
def test_agent_loop_splits_the_repeated_batch_over_its_workers(capsys, tmp_path, version):
    over = [
        *BASE,
        "data.train_batch_size=20",
        "actor_rollout_ref.actor.ppo_mini_batch_size=4",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.rollout.n=5",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
        "trainer.n_gpus_per_node=4",
    ]
    got = findings(capsys, tmp_path, version, over, rule="batch-dispatch")
    assert len(got) == 1 and "rollout.n = 100" in got[0]["message"] and "8 agent loop workers" in got[0]["message"]
    four = [*over, "actor_rollout_ref.rollout.agent.num_workers=4"]
    assert not findings(capsys, tmp_path, version, four, rule="batch-dispatch")


def test_remax_adds_a_greedy_copy_to_the_generation_batch(capsys, tmp_path):
    """verl 0.9.1 sends REMAX's greedy baseline with the sampled batch: 4 x 3 + 4 = 16 samples split
    evenly over 8 workers, where GRPO's 4 x 3 = 12 do not."""
    over = [
        *BASE,
        "data.train_batch_size=4",
        "actor_rollout_ref.actor.ppo_mini_batch_size=4",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.rollout.n=3",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
        "trainer.n_gpus_per_node=4",
    ]
    got = findings(capsys, tmp_path, "0.9.1", over, rule="batch-dispatch")
    assert len(got) == 1 and "rollout.n = 12" in got[0]["message"]
    assert not findings(capsys, tmp_path, "0.9.1", [*over, "algorithm.adv_estimator=remax"], rule="batch-dispatch")


@pytest.mark.parametrize(
    "version", ["0.9.1", pytest.param("0.7.0", marks=needs_corpus), pytest.param("0.4.1", marks=needs_corpus)]
)
def test_training_split_with_dynamic_batch_size(capsys, tmp_path, version):
    """train 20 x n 3 = 60 over 16 ranks: unchecked at start with dynamic batch size in 0.9.1 and
    v0.7.0; v0.4.1's _validate_config checks it always (the verl-check rule's), so not here."""
    over = [
        *BASE,
        "data.train_batch_size=20",
        "actor_rollout_ref.actor.ppo_mini_batch_size=20",
        "actor_rollout_ref.actor.use_dynamic_bsz=True",
        "actor_rollout_ref.rollout.n=3",
        "actor_rollout_ref.rollout.agent.num_workers=4",
        "trainer.n_gpus_per_node=16",
        "actor_rollout_ref.rollout.mode=async",
    ]
    got = [f for f in findings(capsys, tmp_path, version, over, rule="batch-dispatch") if "dynamic" in f["message"]]
    assert len(got) == (0 if version == "0.4.1" else 1)
    static = [o.replace("use_dynamic_bsz=True", "use_dynamic_bsz=False") for o in over]
    assert not [
        f for f in findings(capsys, tmp_path, version, static, rule="batch-dispatch") if "dynamic" in f["message"]
    ]


# ---- parallelism: tensor parallel wider than a node ----------------------------------------------


@pytest.mark.parametrize("version", ["0.9.1", pytest.param("0.4.1", marks=needs_corpus)])
def test_training_tp_wider_than_a_node_is_a_warning(capsys, tmp_path, version):
    over = [
        "algorithm.adv_estimator=grpo",
        "actor_rollout_ref.model.path=/models/m",
        "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=16",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=16",
        "trainer.nnodes=2",
        "trainer.n_gpus_per_node=8",
    ]
    got = findings(capsys, tmp_path, version, over, rule="parallelism", config_name="ppo_megatron_trainer")
    assert [f["severity"] for f in got] == ["warning"] and "wider than one node's 8" in got[0]["message"]
    narrow = [o.replace("tensor_model_parallel_size=16", "tensor_model_parallel_size=8") for o in over]
    assert not findings(capsys, tmp_path, version, narrow, rule="parallelism", config_name="ppo_megatron_trainer")


def test_a_tp_that_fails_to_divide_the_world_is_one_error_not_also_slow(capsys, tmp_path):
    """Issue 44, item 6: TP 12 on one node of 8 fails (12 does not divide 8): one error, verl's
    own assert, not also the warning that it runs slowly (it said both)."""
    over = [
        "algorithm.adv_estimator=grpo",
        "actor_rollout_ref.model.path=/models/m",
        "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=12",
        "trainer.nnodes=1",
        "trainer.n_gpus_per_node=8",
    ]
    got = findings(capsys, tmp_path, "0.9.1", over, config_name="ppo_megatron_trainer")
    about = [f for f in got if f["rule"] == "parallelism" and "actor:" in f["message"]]
    assert about == [] and [f for f in got if "must be divisible by model_parallel_size (12)" in f["message"]], got


# ---- the evaluator ---------------------------------------------------------------------------------


class _View:
    """The part of LaunchView the evaluator reads."""

    def __init__(self, values: dict):
        self.values = values
        self.tree = {}
        for key, value in values.items():
            node = self.tree
            *heads, last = key.split(".")
            for h in heads:
                node = node.setdefault(h, {})
            node[last] = value

    def raw(self, key):
        node = self.tree
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def value(self, key):
        return self.values.get(key)

    def setting(self, key):
        return None


def _run(code: str, values: dict, calls=None):
    ev = Evaluator(_View(values), calls=calls)
    func = ast.parse(code).body[0]
    ev.run(func.body, {"self": V(Obj({})), "config": V(Node(ev, "s"))})
    return ev


def test_evaluator_runs_normalization_and_fills_the_assert_message():
    ev = _run(
        "def f(self, config):\n"
        "    self.config = config\n"
        "    self.config.mini *= self.config.n\n"
        "    self.config.mini //= world() // self.config.get('sp', 1)\n"
        "    if self.config.micro is not None:\n"
        "        c = self.config\n"
        "        assert c.mini % c.micro == 0, f'mini {c.mini} micro {c.micro}'\n",
        {"s.mini": 16, "s.n": 4, "s.micro": 3},
        calls={"world": 16},
    )
    assert [(a.key, a.value) for a in ev.assigned] == [("s.mini", 64), ("s.mini", 4)]
    assert ev.failures[0].message == "mini 4 micro 3" and ev.failures[0].kind == "AssertionError"
    assert ev.failures[0].keys[:2] == ["s.mini", "s.n"]


def test_evaluator_unknowns_never_fail():
    ev = _run(
        "def f(self, config):\n"
        "    x = something_unknown()\n"
        "    if x > 3:\n"
        "        y = 1\n"
        "    assert x % 2 == 0\n"
        "    z = config.a // x\n"
        "    assert config.a > 100\n",
        {"s.a": 5},
    )
    assert [f.line for f in ev.failures] == [7]  # only the assert on a known value
    assert ev.locals["y"].value is UNKNOWN


def test_evaluator_division_by_zero_and_none_are_failures():
    ev = _run("def f(self, config):\n    q = config.a % config.b\n", {"s.a": 4, "s.b": 0})
    assert ev.failures[0].kind == "ZeroDivisionError"
    ev = _run("def f(self, config):\n    q = config.a * config.b\n", {"s.a": 4, "s.b": None})
    assert ev.failures[0].kind == "TypeError"


@pytest.mark.parametrize(
    "loop",
    [
        "found = 0\n    for x in [1, 2, 3]:\n        if x > 1:\n            found = x\n            break\n    assert found == 2",
        "found = 0\n    for x in [1, 2, 3]:\n        if x == 3:\n            continue\n        found = x\n    assert found == 2",
        "total = 0\n    for x in range(2000):\n        total = total + 1\n    assert total == 2000",
    ],
    ids=["break", "continue", "a-loop-cut-short"],
)
def test_evaluator_never_invents_a_failure_cpython_would_not_raise(loop):
    """Issue 46: `break` and `continue` were no-ops, and a loop cut at 1,000 turns kept what its
    body assigned: each assert here passes in CPython and was reported as an AssertionError."""
    ev = _run("def f(self, config):\n    " + loop + "\n", {})
    assert ev.failures == [], [(f.kind, f.message) for f in ev.failures]
