"""Every error and warning the validator reports on ../shared/corpus, judged against the code that runs.

Issues 11 and 19. Each corpus is validated against its own verl (v0.7.0's and
v0.4.1's whole packages, Logic-RL's vendored config tree and main_ppo.py). The
table holds one verdict per reported error or warning: TRUE (the launch really
fails or silently misbehaves on that stack; for a warning, what it says holds and
is the script's), FALSE (it does not, or it is about the tool, not the script) or
UNSURE, with the line of code that decides it. The test asserts that every TRUE
verdict is still reported at its place and severity class, that no FALSE one is
(a FALSE one may stay as an info note about the tool), that every error and
warning reported is in the table, and that at least 90% of each corpus's
warnings are TRUE.

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

from verl_preflight.app.cli import main

CORPUS = os.path.join(SHARED, "corpus")
pytestmark = [
    pytest.mark.slow,  # the slow tier (make test-slow): every corpus script checked
    pytest.mark.skipif(
        not os.path.isdir(CORPUS), reason="../shared/corpus is absent (a fresh clone has no ../shared)"
    ),
]

TRUE, FALSE, UNSURE = "TRUE", "FALSE", "UNSURE"
V07 = "verl-v0.7.0"
V041 = "verl-v0.4.1"
LOGIC_RL = "logic-rl"
CONFIG_TREES = {
    V07: "verl-v0.7.0/verl/trainer/config",
    V041: "verl-v0.4.1/verl/trainer/config",
    LOGIC_RL: "logic-rl/verl/trainer/config",
}
STUB_BASH = "bash with a stub python3 first on PATH"

HYDRA = "hydra-core 1.3.8"
HYDRA_NOTE = "a limit of the tool, not a fault of the script"
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
    *[
        (
            V07,
            f"tests/special_e2e/ppo_trainer/{name}",
            23,
            "config-value",
            TRUE,
            "verl v0.7.0 verl/workers/rollout/base.py:81-84,97 — _ROLLOUT_REGISTRY holds ('vllm', 'async') and "
            "('sglang', 'async') only and get_rollout_class asserts (name, mode) in it; the workers' init_model "
            "calls it (workers/fsdp_workers.py:648; engine_workers.py:506 with the new engine; from "
            "trainer/ppo/ray_trainer.py:911 init_workers) before the agent loop's RolloutReplicaRegistry.get "
            "raises too (workers/rollout/replica.py:225): rollout name hf was removed",
        )
        for name in ("run_single_gpu.sh", "run_single_gpu_with_engine.sh")
    ],
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
        63,
        "verl-check",
        TRUE,
        "verl v0.7.0 verl/workers/config/actor.py:184-187 — ActorConfig.__post_init__ asserts 'Please set at least "
        "one of ppo_micro_batch_size or ppo_micro_batch_size_per_gpu' (both null in actor/actor.yaml:21,24, "
        "use_dynamic_bsz false at :28); main_ppo.py:292 validate_config builds the ActorConfig (utils/config.py:151 "
        "of the wheel); the real code raises there (tests/test_verl_checks_differential.py, corpus launches); and at "
        "the same launch, utils/config.py:142 check_mutually_exclusive for the rollout (log_prob micro batch sizes "
        "both null): an independent second mistake",
    ),
    (
        V041,
        "examples/grpo_trainer/run_qwen2-7b_seq_balance_math_megatron.sh",
        15,
        "verl-check",
        TRUE,
        "verl v0.4.1 verl/trainer/ppo/ray_trainer.py:371 — _validate_config on Megatron computes `megatron_dp * "
        "ppo_micro_batch_size_per_gpu` whatever use_dynamic_bsz says; the script uses dynamic batch size and leaves "
        "the micro batch null: TypeError (the release's own code raises it, tests/test_verl_checks_differential.py)",
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

# ---- verl v0.4.1: errors -------------------------------------------------------------
VERDICTS += [
    *[
        (
            V041,
            "examples/grpo_trainer/run_deepseek671b_math_megatron.sh",
            line,
            "override-syntax",
            TRUE,
            f"the script's {what} is a placeholder left as is; " + BAD_SYNTAX + " ('<')",
        )
        for line, what in (
            (62, 'line 13 LLM="<path_to_dsv3_config>"'),
            (100, 'line 12 DIST_CKPT_PATH="<path_to_dist_ckpt>"'),
            (101, 'line 12 DIST_CKPT_PATH="<path_to_dist_ckpt>"'),
        )
    ],
    (
        V041,
        "examples/grpo_trainer/run_minicpmo2_6.sh",
        14,
        "override-append-existing",
        TRUE,
        "verl v0.4.1 verl/trainer/config/ppo_trainer.yaml:80 `trust_remote_code: False` under data; "
        f"{HYDRA} hydra/_internal/config_loader_impl.py:371-383 — `+key` over a non-null value",
    ),
    (
        V041,
        "examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh",
        6,
        "escaped-blank",
        TRUE,
        f"bash: a blank after the line's backslash ends the command there ({STUB_BASH})",
    ),
    (
        V041,
        "examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh",
        6,
        "override-syntax",
        TRUE,
        "the argument ' ' that bash passes (line 6); " + BAD_SYNTAX,
    ),
    (
        V041,
        "examples/ppo_trainer/run_deepseek_full_hh_rlhf.sh",
        32,
        "override-missing-key",
        TRUE,
        "verl v0.4.1 verl/trainer/config/ppo_megatron_trainer.yaml:325-361 — reward_model has megatron.param_offload "
        "(330) but no param_offload; " + NOT_OVERRIDE,
    ),
    (
        V041,
        "tests/special_e2e/run_gsm8k_fsdp_sgl_multiturn_sf_tool.sh",
        19,
        "config-name",
        TRUE,
        '--config-path="$(pwd)/examples/sglang_multiturn/config" from the repository root holds no '
        f"gsm8k_multiturn_sf_grpo.yaml; {HYDRA} hydra/_internal/defaults_list.py:773 (Cannot find primary config)",
    ),
]

# ---- Logic-RL: errors ------------------------------------------------------------------
VERDICTS += [
    (
        LOGIC_RL,
        "examples/generation/run_deepseek_v2_lite_math.sh",
        line,
        "override-syntax",
        TRUE,
        "bash expands ~ only in a NAME=value word whose NAME is an identifier, so `data.path=~/...` reaches "
        "python3 with its ~; " + BAD_SYNTAX + " (token recognition error at '~')",
    )
    for line in (4, 7)
]

# ---- warnings: TRUE ------------------------------------------------------------------
FORWARD = f'{STUB_BASH}: two extra arguments given to the script never reach the launch (its last word is not "$@")'
LAUNCH_PASSES_ARGS = {
    V07: [
        ("examples/generation/run_deepseek7b_mutli_node.sh", 7),
        ("examples/generation/run_deepseek_v2_lite_math.sh", 7),
        ("examples/gmpo_trainer/test_dapo_7b_math.sh", 66),
        ("examples/gmpo_trainer/test_dapo_qwen3_30b_math.sh", 63),
        ("examples/grpo_trainer/run_deepseek671b_math_megatron_96gb.sh", 78),
        ("examples/grpo_trainer/run_qwen2_5_7b_grpo_discrete_prof_npu.sh", 15),
        ("examples/grpo_trainer/run_qwen2_5_7b_grpo_e2e_prof_npu.sh", 14),
        ("examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh", 78),
        ("examples/grpo_trainer/run_qwen3-8b_npu.sh", 12),
        ("examples/grpo_trainer/run_qwen3_4b_grpo_vllm_1k_npu.sh", 35),
        ("examples/grpo_trainer/run_qwen3moe-30b_megatron_96gb.sh", 95),
        ("examples/gspo_trainer/run_qwen30b_gspo.sh", 163),
        ("examples/gspo_trainer/test_gspo_qwen30b_a3b_ep.sh", 80),
        ("examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh", 3),
        ("examples/rollout_correction/run_with_rollout_corr.sh", 63),
        ("examples/router_replay/run_qwen30_a3b_megatron_vllm.sh", 39),
        ("examples/sapo_trainer/run_qwen30b_sapo.sh", 338),
        ("examples/sft/vlm/run_qwen3_vl_2b.sh", 79),
        ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_vllm_fsdp.sh", 16),
        ("tests/special_e2e/generation/run_gen_qwen05.sh", 11),
        ("tests/special_e2e/generation/run_gen_qwen05_server.sh", 10),
        ("tests/special_e2e/ppo_trainer/run_single_gpu.sh", 1),
        ("tests/special_e2e/ppo_trainer/run_single_gpu_with_engine.sh", 1),
        ("tests/special_e2e/run_genrm_remote.sh", 45),
        ("tests/special_e2e/run_r1_distill_qwen_aime24_eval.sh", 7),
        ("tests/special_e2e/sft/run_sft_engine.sh", 107),
        ("tests/special_npu/run_qwen2_5_05b_sft_peft_sp2.sh", 30),
    ],
    V041: [
        ("examples/generation/run_deepseek7b_mutli_node.sh", 7),
        ("examples/generation/run_deepseek_v2_lite_math.sh", 7),
        ("examples/grpo_trainer/run_qwen3-236b_megatron.sh", 62),
        ("examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh", 3),
        ("tests/special_e2e/generation/run_gen_qwen05.sh", 11),
        ("tests/special_e2e/run_r1_distill_qwen_aime24_eval.sh", 7),
    ],
    LOGIC_RL: [
        ("examples/generation/run_deepseek_v2_lite_math.sh", 1),
        ("scripts/train_ppo_3B_4gpu.sh", 1),
        ("scripts/train_ppo_7B_4gpu.sh", 1),
    ],
}
# a script that reads its own arguments and forwards none (`ENGINE=${1:-vllm}`, `nproc_per_node=$1`):
# a "$@" at the end would hand Hydra those words too and break the launch (issue 43: never advised)
OWN_ARGUMENTS = (
    "bash: the script's first argument is its own option; appended \"$@\" would pass it to Hydra as an override "
    "(hydra/core/override_parser/overrides_parser.py: a bare word is no override), so the advice would break it"
)
VERDICTS += [
    (corpus, script, line, "launch-passes-args", FALSE, OWN_ARGUMENTS)
    for corpus, script, line in (
        (V07, "examples/grpo_trainer/run_qwen3_vl-30b-megatron.sh", 20),
        (LOGIC_RL, "examples/sft/gsm8k/run_deepseek_6b7.sh", 7),
        (LOGIC_RL, "examples/sft/gsm8k/run_gemma_7b.sh", 7),
    )
]
# found once the guard `[ "$#" -lt 2 ] && exit 1` is passed with the arguments given (issue 20)
LAUNCH_PASSES_ARGS[V07] += [
    ("tests/special_e2e/run_r1_distill_qwen_aime24_eval.sh", 26),
    ("tests/special_e2e/run_spin.sh", 11),  # ends in `2>&1 | tee verl_demo.log`
    ("tests/special_e2e/run_transferqueue.sh", 134),  # `| tee "$log_file" $@`: the arguments go to tee
    ("tests/special_e2e/run_transferqueue.sh", 167),
]
LAUNCH_PASSES_ARGS[V041] += [
    ("tests/special_e2e/run_r1_distill_qwen_aime24_eval.sh", 26),
    ("tests/special_e2e/run_spin.sh", 7),
]
# `trainer.total_epochs=1 $@ \` then overrides of the script's own: Hydra applies overrides in order
# (config_loader_impl.py _apply_overrides_to_config), so those win over what the user passes
FORWARDS_TOO_EARLY = {
    V07: [
        ("examples/sft/gsm8k/run_qwen3_8b_sft_peft_sp2_npu.sh", 14),
        ("examples/sft/gsm8k/run_qwen_05_peft.sh", 16),
        ("examples/sft/gsm8k/run_qwen_05_sp2.sh", 14),
        ("examples/sft/gsm8k/run_qwen_05_sp2_liger.sh", 14),
        ("examples/sft/multiturn/run_qwen_05_sp2.sh", 15),
    ],
    V041: [
        ("examples/sft/gsm8k/run_qwen_05_peft.sh", 16),
        ("examples/sft/gsm8k/run_qwen_05_sp2.sh", 14),
        ("examples/sft/gsm8k/run_qwen_05_sp2_liger.sh", 14),
        ("examples/sft/multiturn/run_qwen_05_sp2.sh", 15),
    ],
}
VERDICTS += [
    (corpus, script, line, "launch-passes-args", TRUE, FORWARD)
    for corpus, places in LAUNCH_PASSES_ARGS.items()
    for script, line in places
]
VERDICTS += [
    (
        corpus,
        script,
        line,
        "launch-passes-args",
        TRUE,
        f"{HYDRA} hydra/_internal/config_loader_impl.py _apply_overrides_to_config applies overrides in order: "
        "the script's overrides after \"$@\" win over the user's",
    )
    for corpus, places in FORWARDS_TOO_EARLY.items()
    for script, line in places
]
# a variable an override reads that the script never assigns, with no default (issue 20): without
# `set -u` bash expands it to nothing. TRUE where nothing in verl's or the project's docs exports it
# for the script; the ones an outside launcher exports (Logic-RL's README, ARNOLD_* of a cluster) hold
# as said: unless the environment exports it, the value is empty.
UNASSIGNED = {
    V07: [
        ("examples/grpo_trainer/run_deepseek671b_math_megatron_80gb.sh", 116, "CKPT_DIR: no line sets it"),
        ("examples/grpo_trainer/run_gptoss_20b.sh", 39, "gsm8k_train_path: the script sets train_files= instead"),
        ("examples/grpo_trainer/run_gptoss_20b.sh", 40, "gsm8k_test_path: the script sets test_files= instead"),
        ("examples/grpo_trainer/run_qwen3_8b_grpo_sglang_1k_spmd_npu.sh", 26, "$pwd (lowercase) is not $PWD"),
        ("examples/grpo_trainer/run_qwen3_8b_grpo_sglang_32k_spmd_npu.sh", 26, "$pwd (lowercase) is not $PWD"),
        ("examples/grpo_trainer/run_qwen3_vl-235b-megatron.sh", 30, "RAY_DATA_HOME in HF_MODEL_PATH's default"),
        ("examples/grpo_trainer/run_qwen3_vl-30b-megatron.sh", 30, "RAY_DATA_HOME in HF_MODEL_PATH's default"),
        ("examples/grpo_trainer/run_qwen3_vl-8b-megatron.sh", 36, "RAY_DATA_HOME in HF_MODEL_PATH's default"),
        ("examples/grpo_trainer/run_qwen3moe-30b_megatron_96gb.sh", 97, "aime24_test_path: no line sets it"),
        ("examples/gspo_trainer/run_qwen30b_gspo.sh", 186, "ARNOLD_WORKER_GPU: exported by the cluster's launcher"),
        ("examples/gspo_trainer/run_qwen30b_gspo.sh", 187, "ARNOLD_WORKER_NUM: exported by the cluster's launcher"),
        ("examples/ppo_trainer/run_moonlight16b_a3b_gsm8k_megatron.sh", 55, "LLM: the script sets HF_MODEL_PATH"),
        ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_vllm_fsdp.sh", 35, "use_kl_loss: never set"),
        ("examples/tuning/70b/qwen2-70b_grpo_32_h20_fsdp_vllm.sh", 9, "data_path: the script sets gsm8k_train_path"),
    ],
    V041: [
        ("examples/grpo_trainer/run_deepseek671b_math_megatron.sh", 103, "CKPT_DIR: no line sets it"),
        ("examples/ppo_trainer/run_moonlight16b_a3b_gsm8k_megatron.sh", 57, "LLM: the script sets HF_MODEL_PATH"),
        ("examples/tuning/70b/qwen2-70b_grpo_32_h20_fsdp_vllm.sh", 9, "data_path: the script sets gsm8k_train_path"),
    ],
    LOGIC_RL: [
        (f"scripts/train_ppo_{size}_4gpu.sh", line, f"{name}: nothing in the project exports it")
        for size, places in {
            "3B": [
                (2, "DATA_DIR"),
                (8, "BASE_MODEL"),
                (13, "ROLLOUT_TP_SIZE"),
                (27, "N_GPUS"),
                (32, "EXPERIMENT_NAME"),
            ],
            "7B": [(2, "DATA_DIR"), (8, "BASE_MODEL"), (36, "N_GPUS"), (41, "EXPERIMENT_NAME")],
        }.items()
        for line, name in places
    ],
}
VERDICTS += [
    (corpus, script, line, "unassigned-variable", TRUE, f"bash expands an unset variable to nothing: {why}")
    for corpus, places in UNASSIGNED.items()
    for script, line, why in places
]
DUMMY_GUARD = (
    "`[ -z \"${DUMMY_MODEL_CONFIG_PATH}\" ]` under set -u with no default: bash stops there ('unbound variable'), "
    f"before the script's own message ({STUB_BASH})"
)
VERDICTS += [
    *[
        (
            V07,
            "examples/gspo_trainer/test_gspo_qwen30b_a3b_ep.sh",
            line,
            "unset-variable",
            TRUE,
            f"line {line} under set -u (line 2) with no default, unlike its siblings (run_qwen30b_gspo.sh:4 defaults "
            f"it); nothing in the corpus sets it; {STUB_BASH}: '{name}: unbound variable'",
        )
        for line, name in ((46, "HDFS_ROOT"), (47, "DATA_ROOT"))
    ],
    (V07, "tests/special_e2e/run_ppo_trainer_megatron.sh", 18, "unbound-variable", TRUE, DUMMY_GUARD),
    (V07, "tests/special_npu/run_qwen3_30b_dapo_mindspeed.sh", 14, "unbound-variable", TRUE, DUMMY_GUARD),
    (
        V07,
        "tests/special_npu/run_qwen3_30b_dapo_mindspeed.sh",
        12,
        "unbound-variable",
        TRUE,
        'line 12 `[[ "$USE_DUMMY_MODEL" == "True" ]]` under set -u, no default (its sibling '
        "tests/special_e2e/run_ppo_trainer_megatron.sh:14 has `${USE_DUMMY_MODEL:-False}`): a run without it stops "
        "there; verl's CI may export it, the script does not say so",
    ),
    (
        V07,
        "tests/special_e2e/run_transferqueue.sh",
        87,
        "duplicate-key",
        TRUE,
        "the array sets actor_rollout_ref.actor.use_kl_loss on line 82 and again, to another value, on line 87: "
        "Hydra applies overrides in order (config_loader_impl.py:_apply_overrides_to_config), the first is dead",
    ),
    (V041, "tests/special_e2e/run_ppo_trainer_megatron.sh", 17, "unbound-variable", TRUE, DUMMY_GUARD),
]

# ---- warnings the validator used to give, FALSE: each about the tool, now an info note or gone ----
ABOUT_THE_TOOL = [
    (
        V07,
        "examples/grpo_trainer/run_deepseek671b_math_megatron_96gb.sh",
        16,
        "incomplete",
        "an optional env.sh beside the script, absent: `[ -f ... ] && source` skips it (the tool: a note)",
    ),
    (V07, "examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh", 14, "incomplete", "as above"),
    (
        V07,
        "examples/grpo_trainer/run_qwen3_4b_grpo_vllm_1k_npu.sh",
        2,
        "incomplete",
        "CANN's set_env.sh, on the Ascend host only; it exports environment, the launch does not depend on it (a note)",
    ),
    (V07, "examples/grpo_trainer/run_qwen3_4b_grpo_vllm_1k_npu.sh", 3, "incomplete", "CANN's nnal/atb set_env.sh"),
    (
        V07,
        "examples/gspo_trainer/test_gspo_3b_math.sh",
        18,
        "incomplete",
        '`eval "$(conda shell.bash hook)"` defines conda\'s shell functions only (a note)',
    ),
    (V07, "examples/gspo_trainer/test_gspo_3b_math_slurm.sh", 18, "incomplete", "the conda hook, as above"),
    (V07, "examples/sapo_trainer/run_qwen30b_sapo.sh", 260, "incomplete", "the conda hook, as above"),
    (V07, "examples/sapo_trainer/run_qwen30b_sapo.sh", 333, "incomplete", "the conda hook, as above"),
    (
        V07,
        "examples/gspo_trainer/test_gspo_3b_math.sh",
        31,
        "unset-variable",
        "#SBATCH script (lines 2-12): sbatch exports SLURM_JOB_NUM_NODES",
    ),
    (V07, "examples/gspo_trainer/test_gspo_3b_math_slurm.sh", 31, "unset-variable", "#SBATCH script, as above"),
    (
        V07,
        "tests/special_e2e/run_test.sh",
        5,
        "unbound-variable",
        '`CONFIG_NAME="$1"`: the helper needs its argument; an info note says so',
    ),
    (V041, "tests/special_e2e/run_test.sh", 5, "unbound-variable", "as in v0.7.0"),
    (
        V07,
        "tests/special_e2e/run_grpo_lora_with_merge.sh",
        68,
        "unknown-entry",
        "verl.model_merger is argparse (verl/model_merger/base_model_merger.py:34-79); its arguments are its own",
    ),
    (V041, "tests/special_e2e/run_grpo_lora_with_merge.sh", 70, "unknown-entry", "as in v0.7.0"),
    (
        LOGIC_RL,
        "examples/generation/run_deepseek_v2_lite_math.sh",
        1,
        "unknown-entry",
        "main_generation's config generation.yaml is in the vendored tree: the launch is checked (and fails, above)",
    ),
    (LOGIC_RL, "examples/sft/gsm8k/run_deepseek_6b7.sh", 7, "unknown-entry", "sft_trainer.yaml is vendored: checked"),
    (LOGIC_RL, "examples/sft/gsm8k/run_gemma_7b.sh", 7, "unknown-entry", "as above"),
    (LOGIC_RL, "math_eval/auto_test_aime.sh", 45, "budget", "no verl launch in the script; a limit of the tool"),
    (LOGIC_RL, "math_eval/auto_test_aime.sh", 51, "budget", "the same event"),
    *[
        (
            corpus,
            script,
            line,
            "config-path",
            "`$(pwd)/examples/sglang_multiturn/config` from the repository root "
            + ("is composed (v0.4.1 has the folder)" if corpus == V041 else "is not in the corpus: a note"),
        )
        for corpus, places in {
            V07: [
                ("examples/sglang_multiturn/geo3k/run_qwen2.5-3b_geo3k_multiturn.sh", 13),
                ("examples/sglang_multiturn/geo3k/run_qwen2.5-3b_geo3k_multiturn_4xgpu.sh", 12),
                ("examples/sglang_multiturn/geo3k/run_qwen2.5-3b_megatron_geo3k_multiturn.sh", 19),
                ("examples/sglang_multiturn/run_qwen0.5b_gsm8k_multiturn_curriculum.sh", 12),
                ("examples/sglang_multiturn/run_qwen2.5-0.5b_gsm8k_multiturn_w_interaction.sh", 15),
                ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn.sh", 18),
                ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_4xgpu.sh", 12),
                ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_4xgpu_server.sh", 12),
                ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_server.sh", 18),
                ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_vllm_fsdp.sh", 17),
                ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_tool_agent_mlflow.sh", 12),
                ("examples/sglang_multiturn/run_qwen2.5-3b_megatron_gsm8k_multiturn.sh", 19),
                ("examples/sglang_multiturn/run_qwen3-4b_gsm8k_multiturn.sh", 12),
                ("examples/sglang_multiturn/search_r1_like/run_qwen2.5-3b_instruct_search_multiturn.sh", 20),
                ("tests/special_e2e/run_geo3k_fsdp_sgl_multiturn_w_tool.sh", 15),
                ("tests/special_e2e/run_gsm8k_fsdp_sgl_multiturn_sf_tool.sh", 18),
                ("tests/special_e2e/run_gsm8k_fsdp_sgl_multiturn_w_tool.sh", 15),
            ],
            V041: [
                ("examples/sglang_multiturn/geo3k/run_qwen2.5-3b_geo3k_multiturn.sh", 13),
                ("examples/sglang_multiturn/geo3k/run_qwen2.5-3b_geo3k_multiturn_4xgpu.sh", 12),
                ("examples/sglang_multiturn/geo3k/run_qwen2.5-3b_megatron_geo3k_multiturn.sh", 19),
                ("examples/sglang_multiturn/run_qwen2.5-0.5b_gsm8k_multiturn_w_interaction.sh", 15),
                ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn.sh", 12),
                ("examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_4xgpu.sh", 12),
                ("examples/sglang_multiturn/run_qwen2.5-3b_megatron_gsm8k_multiturn.sh", 19),
                ("examples/sglang_multiturn/run_qwen3-4b_gsm8k_multiturn.sh", 12),
                ("examples/sglang_multiturn/search_r1_like/run_qwen2.5-3b_instruct_search_multiturn.sh", 20),
                ("tests/special_e2e/run_geo3k_fsdp_sgl_multiturn_w_tool.sh", 15),
                ("tests/special_e2e/run_gsm8k_fsdp_sgl_multiturn_sf_tool.sh", 18),
                ("tests/special_e2e/run_gsm8k_fsdp_sgl_multiturn_w_tool.sh", 15),
            ],
        }.items()
        for script, line in places
    ],
]
VERDICTS += [(c, s, ln, r, FALSE, f"{HYDRA_NOTE}: {why}") for c, s, ln, r, why in ABOUT_THE_TOOL]

# issue 20: verl v0.7.0's vLLM server and agent loop, as sequence-length and batch-dispatch read them
CHUNKED_DROPPED = (
    "verl v0.7.0 verl/workers/rollout/vllm_rollout/vllm_async_server.py:362-365 — the engine arguments become "
    "vLLM flags with `if isinstance(v, bool): if v: server_args.append(...)`: enable_chunked_prefill=False is "
    "left out and vLLM keeps chunked prefill on (verl PR #7626: an explicit False was silently dropped until #7508)"
)
MAX_MODEL_LEN_REPLACED = (
    "verl v0.7.0 verl/workers/rollout/vllm_rollout/vllm_async_server.py:198 — "
    "`self.config.max_model_len = self.model_config.hf_config.max_position_embeddings` replaces the setting"
)
AGENT_LOOP_SPLIT = (
    "verl v0.7.0 verl/trainer/ppo/ray_trainer.py:1352-1363 repeats the train batch rollout.n times for "
    "generation; experimental/agent_loop/agent_loop.py:949 `prompts.chunk(len(self.agent_loop_workers))` with "
    "rollout.agent.num_workers = 8 (trainer/config/rollout/rollout.yaml:209); protocol.py:884-886 asserts "
    "len % chunks == 0 (no padding): "
)
VERDICTS += [
    *[
        (V07, script, line, "sequence-length", TRUE, CHUNKED_DROPPED)
        for script, line in [
            ("examples/grpo_trainer/run_glm41v_9b.sh", 31),
            ("examples/grpo_trainer/run_minicpmo2_6.sh", 34),
            ("examples/grpo_trainer/run_qwen2_5_7b_grpo_discrete_prof_npu.sh", 48),
            ("examples/grpo_trainer/run_qwen2_5_7b_grpo_e2e_prof_npu.sh", 46),
            ("examples/grpo_trainer/run_qwen2_5_7b_grpo_npu.sh", 29),
            ("examples/grpo_trainer/run_qwen2_5_vl-7b.sh", 32),
            ("examples/grpo_trainer/run_qwen2_5_vl-7b_freeze_vision.sh", 32),
            ("examples/grpo_trainer/run_qwen2_5_vl-7b_lora.sh", 37),
            ("examples/grpo_trainer/run_qwen2_5_vl-7b_seq_balance.sh", 30),
            ("examples/grpo_trainer/run_qwen2_5_vl_32b_npu.sh", 36),
            ("examples/grpo_trainer/run_qwen2_5_vl_3b_npu.sh", 36),
            ("examples/grpo_trainer/run_qwen2_5_vl_7b_npu.sh", 36),
            ("examples/tuning/0.5b/qwen2-0.5b_grpo-lora_1_h100_fsdp_vllm.sh", 52),
            ("examples/tuning/1.5b/qwen2-1.5b_grpo-lora_1_h100_fsdp_vllm.sh", 52),
            ("examples/tuning/14b/qwen2-14b_grpo-lora_2_h100_fsdp_vllm.sh", 52),
            ("examples/tuning/32b/qwen2-32b_grpo-lora_4_h100_fsdp_vllm.sh", 52),
            ("examples/tuning/3b/qwen2-3b_grpo-lora_1_h100_fsdp_vllm.sh", 52),
            ("examples/tuning/70b/qwen2-72b_grpo-lora_8_h100_fsdp_vllm.sh", 52),
            ("examples/tuning/7b/qwen2-7b_grpo-lora_1_h100_fsdp_vllm.sh", 52),
            ("tests/special_npu/run_qwen2_5_05b_grpo.sh", 30),
            ("tests/special_npu/run_qwen2_5_05b_grpo_mindspeed.sh", 44),
            ("tests/special_npu/run_qwen2_5_vl_3b_npu.sh", 41),
        ]
    ],
    *[
        (V07, script, line, "sequence-length", TRUE, MAX_MODEL_LEN_REPLACED)
        for script, line in [
            ("examples/tuning/0.5b/qwen2-0.5b_grpo-lora_1_h100_fsdp_vllm.sh", 50),
            ("examples/tuning/1.5b/qwen2-1.5b_grpo-lora_1_h100_fsdp_vllm.sh", 50),
            ("examples/tuning/14b/qwen2-14b_grpo-lora_2_h100_fsdp_vllm.sh", 50),
            ("examples/tuning/32b/qwen2-32b_grpo-lora_4_h100_fsdp_vllm.sh", 50),
            ("examples/tuning/3b/qwen2-3b_grpo-lora_1_h100_fsdp_vllm.sh", 50),
            ("examples/tuning/70b/qwen2-72b_grpo-lora_8_h100_fsdp_vllm.sh", 50),
            ("examples/tuning/7b/qwen2-7b_grpo-lora_1_h100_fsdp_vllm.sh", 50),
        ]
    ],
    *[
        (V07, script, line, "batch-dispatch", TRUE, AGENT_LOOP_SPLIT + f"{rows} samples over 8 workers")
        for script, line, rows in [
            ("examples/tuning/0.5b/qwen2-0.5b_grpo-lora_1_h100_fsdp_vllm.sh", 21, 1),
            ("examples/tuning/14b/qwen2-14b_grpo-lora_2_h100_fsdp_vllm.sh", 20, 580),
            ("examples/tuning/32b/qwen2-32b_grpo-lora_4_h100_fsdp_vllm.sh", 20, 900),
            ("examples/tuning/3b/qwen2-3b_grpo-lora_1_h100_fsdp_vllm.sh", 20, 310),
        ]
    ],
]


@pytest.fixture(scope="module")
def documents():
    """{corpus: the validator's JSON report of it}."""
    out = {}
    for corpus, tree in CONFIG_TREES.items():
        root = os.path.join(CORPUS, corpus)
        args = ["--no-cache", "--enable", "launch-passes-args", "--format", "json", "--verl-config"]
        args += [os.path.join(CORPUS, tree), root]
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(args)
        out[corpus] = json.loads(buf.getvalue())
    return out


def test_one_finding_per_mistake_and_place(documents):
    """No two findings of one key at one place, nor two at one word of no key: what several
    stacks or rules say of one mistake is one finding (its `also`)."""
    for corpus, doc in documents.items():
        keyed = [(f["path"], f["line"], f["column"], f["key"]) for f in doc["findings"] if f["key"]]
        assert len(keyed) == len(set(keyed)), corpus
        words = [(f["path"], f["line"], f["column"]) for f in doc["findings"] if not f["key"] and f["column"] > 1]
        assert len(words) == len(set(words)), (corpus, sorted(w for w in words if words.count(w) > 1)[:5])


@pytest.fixture(scope="module")
def reported(documents):
    """{corpus: {(script, line, rule): severity}} of the errors and warnings the validator reports."""
    out = {}
    for corpus, doc in documents.items():
        root = os.path.join(CORPUS, corpus)
        # a finding and what it folds in of the same mistake (`also`: another rule's view) alike
        out[corpus] = {
            (os.path.relpath(f["path"], root), f["line"], said["rule"]): said["severity"]
            for f in doc["findings"]
            for said in (f, *f["also"])
            if said["severity"] in ("error", "warning")
        }
    return out


def test_table_is_well_formed():
    places = [(c, s, ln, r) for c, s, ln, r, _, _ in VERDICTS]
    assert len(places) == len(set(places)), "one verdict per place"
    for corpus, script, _, _, verdict, decided in VERDICTS:
        assert corpus in CONFIG_TREES and verdict in (TRUE, FALSE, UNSURE) and decided
        assert os.path.isfile(os.path.join(CORPUS, corpus, script)), script


def test_true_findings_are_still_reported(reported):
    missing = [v[:4] for v in VERDICTS if v[4] == TRUE and v[1:4] not in reported[v[0]]]
    assert not missing


def test_false_findings_are_gone(reported):
    back = [v[:4] for v in VERDICTS if v[4] == FALSE and v[1:4] in reported[v[0]]]
    assert not back


def test_every_reported_error_and_warning_has_a_verdict(reported):
    judged = {(c, s, ln, r) for c, s, ln, r, _, _ in VERDICTS}
    unjudged = sorted((c, *place) for c, places in reported.items() for place in places if (c, *place) not in judged)
    assert not unjudged, "a new error or warning on the corpus: judge it and add its verdict"


def test_nine_warnings_in_ten_are_true(reported):
    verdict = {(c, s, ln, r): v for c, s, ln, r, v, _ in VERDICTS}
    for corpus, places in reported.items():
        warned = [p for p, severity in places.items() if severity == "warning"]
        true = [p for p in warned if verdict.get((corpus, *p)) == TRUE]
        assert len(true) >= 0.9 * len(warned), (corpus, len(true), len(warned))
