"""Every error the validator reports on ../shared/corpus, judged against the code that runs at launch.

Issue 11 item 6. Each corpus is validated against its own config tree (verl
v0.7.0's, Logic-RL's vendored verl). The table holds one verdict per reported
error: TRUE (the launch really fails, or silently misbehaves, on that stack) or
FALSE (it does not), with the line of code that decides it. The test asserts
that every TRUE verdict is still reported at its place, that no FALSE verdict
is, and that every error reported is in the table: a new error needs a verdict.

The corpus is other projects' files: this table is about them, it quotes at
most a line of their code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os

import pytest
from conftest import SHARED

from verl_preflight.cli import main

CORPUS = os.path.join(SHARED, "corpus")
pytestmark = pytest.mark.skipif(
    not os.path.isdir(CORPUS), reason="../shared/corpus is absent (a fresh clone has no ../shared)"
)

TRUE, FALSE = "TRUE", "FALSE"
V07 = "verl-v0.7.0"
LOGIC_RL = "logic-rl"
CONFIG_TREES = {V07: "verl-v0.7.0/verl/trainer/config", LOGIC_RL: "logic-rl/verl/trainer/config"}

HYDRA = "hydra-core 1.3.8"
NOT_OVERRIDE = f"{HYDRA} hydra/_internal/config_loader_impl.py:389-393 — struct config: 'Could not override'"
BAD_SYNTAX = f"{HYDRA} hydra/core/override_parser/overrides_parser.py:96 — OverrideParseException before composing"


def _run_time_root(script: str, line: int, name: str) -> tuple:
    decided = (
        f"{HYDRA} hydra/_internal/utils.py:321-322 — `config_path = args.config_path`: Hydra looks for "
        f'{name}.yaml in --config-path="$(pwd)/examples/sglang_multiturn/config" (the project\'s own folder, '
        "not in the corpus), never in verl/trainer/config, where the validator looked"
    )
    return (V07, script, line, "config-name", FALSE, decided)


# (corpus, script, line, rule, verdict, "project version path:line — what it does")
VERDICTS = [
    (
        V07,
        "examples/cispo_trainer/run_cispo_qwen2_5_0_5b_gsm8k.sh",
        23,
        "override-missing-key",
        TRUE,
        "verl v0.7.0 verl/trainer/config/model/hf_model.yaml — no torch_dtype key under actor_rollout_ref.model; "
        + NOT_OVERRIDE,
    ),
    (
        V07,
        "examples/grpo_trainer/run_deepseek671b_math_megatron_80gb.sh",
        68,
        "override-syntax",
        TRUE,
        'the script\'s line 10 `LLM="<path_to_dsv3_config>"` is a placeholder left as is; ' + BAD_SYNTAX + " ('<')",
    ),
    (
        V07,
        "examples/grpo_trainer/run_gptoss_20b.sh",
        59,
        "override-append-existing",
        TRUE,
        "verl v0.7.0 verl/trainer/config/engine/fsdp.yaml:33 `model_dtype: fp32` (actor fsdp_config); "
        f"{HYDRA} hydra/_internal/config_loader_impl.py:371-383 — `+key` over a non-null value: 'Could not append'",
    ),
    (
        V07,
        "examples/grpo_trainer/run_gptoss_20b.sh",
        64,
        "override-missing-key",
        TRUE,
        "verl v0.7.0 verl/trainer/config/rollout/rollout.yaml:123 `sglang: {}` has no attention_backend; "
        + NOT_OVERRIDE,
    ),
    (
        V07,
        "examples/grpo_trainer/run_qwen3_4b_grpo_vllm_1k_npu.sh",
        73,
        "override-syntax",
        TRUE,
        'the script\'s line 21 `trainer_experiment_name="qwen3_4b_grpo_8npu}"` (a stray brace); ' + BAD_SYNTAX,
    ),
    (
        V07,
        "examples/grpo_trainer/run_qwen3_4b_grpo_vllm_1k_npu.sh",
        75,
        "override-syntax",
        TRUE,
        "the script's line 25: CKPTS_DIR defaults to a path ending in that name, so with CKPTS_DIR unset the value "
        "ends in '}'; " + BAD_SYNTAX,
    ),
    (
        V07,
        "examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh",
        6,
        "escaped-blank",
        TRUE,
        "bash: `reweight_method=pow \\  # [...]` escapes a blank, so python3 gets ' ' as its last argument and "
        "line 7 runs as a command of its own (checked with a stub python3)",
    ),
    (
        V07,
        "examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh",
        6,
        "override-syntax",
        TRUE,
        "the argument ' ' that bash passes (line 6); " + BAD_SYNTAX + " (token recognition error at ' ')",
    ),
    (
        V07,
        "examples/rollout_correction/run_with_rollout_corr.sh",
        82,
        "batch-arithmetic",
        TRUE,
        "verl v0.7.0 verl/workers/config/actor.py:184-187 — ActorConfig.__post_init__ asserts 'Please set at least "
        "one of ppo_micro_batch_size or ppo_micro_batch_size_per_gpu' (both null in actor/actor.yaml:21,24, "
        "use_dynamic_bsz false at :28); main_ppo.py:292 validate_config runs before the workers, and builds the "
        "ActorConfig at verl/utils/config.py:151 of the verl 0.7.0 wheel (not in the corpus copy)",
    ),
    (
        V07,
        "examples/sft/vlm/run_qwen3_vl_2b.sh",
        48,
        "config-group",
        FALSE,
        "the script's line 50 `optim=${backend}` with backend=${BACKEND:-fsdp}: in the megatron arm BACKEND is the "
        "user's; verl v0.7.0 verl/trainer/config/optim/megatron.yaml exists and composes (the validator asked Hydra "
        "about its grammar stand-in)",
    ),
    _run_time_root("examples/sglang_multiturn/geo3k/run_qwen2.5-3b_geo3k_multiturn.sh", 14, "geo3k_multiturn_grpo"),
    _run_time_root(
        "examples/sglang_multiturn/geo3k/run_qwen2.5-3b_geo3k_multiturn_4xgpu.sh", 13, "geo3k_multiturn_grpo"
    ),
    _run_time_root(
        "examples/sglang_multiturn/geo3k/run_qwen2.5-3b_megatron_geo3k_multiturn.sh",
        20,
        "geo3k_multiturn_megatron_grpo",
    ),
    _run_time_root("examples/sglang_multiturn/run_qwen0.5b_gsm8k_multiturn_curriculum.sh", 13, "gsm8k_multiturn_grpo"),
    _run_time_root(
        "examples/sglang_multiturn/run_qwen2.5-0.5b_gsm8k_multiturn_w_interaction.sh",
        16,
        "gsm8k_multiturn_grpo_w_interaction",
    ),
    _run_time_root("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn.sh", 19, "gsm8k_multiturn_grpo"),
    _run_time_root("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_4xgpu.sh", 13, "gsm8k_multiturn_grpo"),
    _run_time_root(
        "examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_4xgpu_server.sh", 13, "gsm8k_multiturn_grpo_server"
    ),
    _run_time_root(
        "examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_server.sh", 19, "gsm8k_multiturn_grpo_server"
    ),
    _run_time_root("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_vllm_fsdp.sh", 18, "gsm8k_multiturn_grpo"),
    _run_time_root("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_tool_agent_mlflow.sh", 13, "gsm8k_multiturn_grpo"),
    _run_time_root(
        "examples/sglang_multiturn/run_qwen2.5-3b_megatron_gsm8k_multiturn.sh", 20, "gsm8k_multiturn_megatron_grpo"
    ),
    _run_time_root("examples/sglang_multiturn/run_qwen3-4b_gsm8k_multiturn.sh", 13, "gsm8k_multiturn_grpo"),
    _run_time_root(
        "examples/sglang_multiturn/search_r1_like/run_qwen2.5-3b_instruct_search_multiturn.sh",
        21,
        "search_multiturn_grpo",
    ),
    _run_time_root("tests/special_e2e/run_geo3k_fsdp_sgl_multiturn_w_tool.sh", 16, "geo3k_multiturn_grpo"),
    # gsm8k_multiturn_sf_grpo.yaml: not seen in the stored verl sources; the finding looked in the wrong folder
    _run_time_root("tests/special_e2e/run_gsm8k_fsdp_sgl_multiturn_sf_tool.sh", 19, "gsm8k_multiturn_sf_grpo"),
    _run_time_root("tests/special_e2e/run_gsm8k_fsdp_sgl_multiturn_w_tool.sh", 16, "gsm8k_multiturn_grpo"),
    *[
        (
            V07,
            "tests/special_e2e/run_grpo_lora_with_merge.sh",
            line,
            "hydra-argument",
            FALSE,
            f"`python3 -m verl.model_merger merge ... {flag}` is argparse, not Hydra: verl 0.9.1 "
            f"verl/model_merger/base_model_merger.py:{where} defines {flag} (v0.7.0's module is not in the corpus)",
        )
        for line, flag, where in ((69, "--backend", "39-41"), (70, "--local_dir", "42"), (71, "--target_dir", "62-64"))
    ],
    (
        V07,
        "tests/special_npu/run_qwen2_5_05b_grpo_mindspeed.sh",
        68,
        "transformer-config-key",
        FALSE,
        "an Ascend CI script (line 2 `export VLLM_ASCEND_ENABLE_NZ=0`): verl v0.7.0 verl/trainer/main_ppo.py:42-43 "
        "auto_set_device runs it on the NPU, where MindSpeed core_r0.16.0 "
        "features_manager/megatron_basic/megatron_basic.py:54 patches TransformerConfig.__init__ to take keys it "
        "lacks and its flash-attention features read use_flash_attn (fusion_attention_v1_feature.py:55); the "
        "GPU TypeError the validator reported is not this script's stack",
    ),
]


@pytest.fixture(scope="module")
def reported():
    """{corpus: {(script, line, rule)}} of the errors the validator reports."""
    out = {}
    for corpus, tree in CONFIG_TREES.items():
        root = os.path.join(CORPUS, corpus)
        args = ["--no-cache", "--format", "json", "--verl-config", os.path.join(CORPUS, tree), root]
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(args)
        doc = json.loads(buf.getvalue())
        out[corpus] = {
            (os.path.relpath(f["path"], root), f["line"], f["rule"])
            for f in doc["findings"]
            if f["severity"] == "error"
        }
    return out


def test_table_is_well_formed():
    places = [(c, s, ln, r) for c, s, ln, r, _, _ in VERDICTS]
    assert len(places) == len(set(places)), "one verdict per place"
    for corpus, script, _, _, verdict, decided in VERDICTS:
        assert corpus in CONFIG_TREES and verdict in (TRUE, FALSE) and decided
        assert os.path.isfile(os.path.join(CORPUS, corpus, script)), script


def test_true_findings_are_still_reported(reported):
    missing = [v[:4] for v in VERDICTS if v[4] == TRUE and v[1:4] not in reported[v[0]]]
    assert not missing


def test_false_findings_are_gone(reported):
    back = [v[:4] for v in VERDICTS if v[4] == FALSE and v[1:4] in reported[v[0]]]
    assert not back


def test_every_reported_error_has_a_verdict(reported):
    judged = {(c, s, ln, r) for c, s, ln, r, _, _ in VERDICTS}
    unjudged = sorted((c, *place) for c, places in reported.items() for place in places if (c, *place) not in judged)
    assert not unjudged, "a new error on the corpus: judge it and add its verdict"
