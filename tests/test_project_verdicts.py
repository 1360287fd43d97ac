"""Seven public repositories built on verl, checked as their users run the tool (issue 43).

`../shared/corpus/projects/` keeps each as its users have it: verl as a git submodule, as a
fork in a subfolder or at the root, or as a release pinned by a setup script; the projects'
own entry modules and configs; their wrapper and helper scripts. Each is validated from its
root with no flag (`validate-scripts .`), as a user runs it.

The tests assert that every script that launches verl or a project's entry point is checked
against the verl that project runs (`ORIGINS`), that every script that launches nothing says
what it runs instead (`NO_LAUNCH`), and that every error and warning has a verdict (TRUE: the
launch fails or misbehaves on that project's verl, or, for a warning, what it says holds;
FALSE; UNSURE) with the line of code that decides it: every TRUE one still reported, no FALSE
one, and at least 95% of the errors and 80% of the warnings TRUE.

The table is about other projects' files: it quotes at most a line of their code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os

import pytest
from conftest import ROOT, SHARED

from verl_preflight.app.cli import main

PROJECTS = os.path.join(SHARED, "corpus", "projects")
WHEELS = os.path.join(ROOT, ".venv", "wheels")
pytestmark = [
    pytest.mark.slow,  # the slow tier (make test-slow): seven repositories, every script
    pytest.mark.skipif(
        not os.path.isdir(PROJECTS), reason="../shared/corpus is absent (a fresh clone has no ../shared)"
    ),
]

TRUE, FALSE, UNSURE = "TRUE", "FALSE", "UNSURE"
OOR, RLF, GRL, AF, AL, RSTAR, INTUITOR = (
    "Kuaishou-OneRec__OpenOneRec",
    "Simple-Efficient__RL-Factory",
    "lmgame-org__GRL",
    "lupantech__AgentFlow",
    "microsoft__agent-lightning",
    "microsoft__rStar",
    "sunblaze-ucb__Intuitor",
)

# the verl each project's launches run, by the folder the script is in (the longest prefix wins)
ORIGINS = {
    OOR: {
        "verl_rl/": ("vendored, verl_rl/verl", "0.5.0"),
        "verl_distillation/": ("vendored, verl_distillation/verl", "0.7.0.dev"),
    },
    RLF: {"": ("vendored, verl", "0.5.0")},
    GRL: {"": ("git submodule verl, verl/verl", "0.4.1")},
    AL: {
        "": (
            "pinned, scripts/setup_stable_gpu.sh:10: the release's wheel; "
            "also installed by scripts/setup_latest_gpu.sh:13, not here",
            "0.5.0",
        )
    },
    RSTAR: {"": ("git submodule verl, verl/verl", "0.5.0.dev")},
    INTUITOR: {"verl-intuitor/": ("vendored, verl-intuitor/verl", "0.4.1.dev")},
}
# the entry each project's own launches run (module -> root config), where it is not verl's main_ppo
ENTRIES = {
    GRL: {("grl/train.py", "base")},
    AL: {("agentlightning.verl", "config")},
    RSTAR: {("rstar2_agent.main_rstar2_agent", "rstar2_agent_trainer")},
}
# scripts that launch nothing the tool can check: (script, what the note says it runs instead, or None)
_SPLIT = "python3 main_ppo_split.py"  # verl's split-placement example: a Python program of its own
INCOMPLETE = "(not followed to its end)"  # e.g. it sources conda's activation script, which is not here
NO_LAUNCH = {
    OOR: {
        (f"{fork}/{script}", run)
        for fork in ("verl_rl", "verl_distillation")
        for script, run in (
            ("examples/split_placement/run_deepseek7b_llm.sh", _SPLIT),
            ("init_ray_cluster.sh", None),
            ("init_ray.sh", INCOMPLETE),  # it sources conda's activation script
            ("deploy_env.sh", INCOMPLETE),  # likewise
            ("scripts/generate_trainer_config.sh", "python3 scripts/print_cfg.py"),
            ("scripts/install_vllm_sglang_mcore.sh", None),
        )
    },
    RLF: {
        ("examples/split_placement/run_deepseek7b_llm.sh", _SPLIT),
        ("install.sh", None),
        ("scripts/install_vllm_sglang_mcore.sh", None),
    },
    GRL: {("scripts/install_submodules.sh", None)},
    # the launch is built in Python: train_with_logs.sh runs train/train_agent.py, which reads
    # train/config.yaml and starts `python -m agentflow.verl` through subprocess
    AF: {
        ("scripts/setup_stable_gpu.sh", None),
        ("setup.sh", INCOMPLETE),  # it sources .venv/bin/activate, which a checkout does not hold
        ("train/train_with_logs.sh", "python train/train_agent.py"),
    },
    AL: {("scripts/setup_latest_gpu.sh", None), ("scripts/setup_stable_gpu.sh", None)},
    RSTAR: {("install.sh", None)},
    INTUITOR: {
        ("verl-intuitor/examples/split_placement/run_deepseek7b_llm.sh", _SPLIT),
        ("verl-intuitor/scripts/install_vllm_sglang_mcore.sh", None),
        ("verl-intuitor/scripts_ray/ray_utils.sh", None),
        *{(f"verl-intuitor/scripts_ray/setup_ray_cluster_{i}.sh", None) for i in (1, 2, 3, 4)},
    },
}

HYDRA = "hydra-core 1.3.8"
NOT_OVERRIDE = f"{HYDRA} hydra/_internal/config_loader_impl.py:389-393 — struct config: 'Could not override'"
APPEND = f"{HYDRA} hydra/_internal/config_loader_impl.py:371-383 — `+key` over a non-null value: 'Could not append'"
BAD_SYNTAX = f"{HYDRA} hydra/core/override_parser/overrides_parser.py:96 — OverrideParseException before composing"
EMPTY = "bash expands an unset variable to nothing"


def _megatron_model(project: str, fork: str = "") -> str:
    return (
        f"{project} {fork}verl/trainer/config/ppo_megatron_trainer.yaml:28-46 — the Megatron config's "
        "actor_rollout_ref.model has no enable_gradient_checkpointing nor use_remove_padding (verl 0.5.0 fork); "
        + NOT_OVERRIDE
    )


def _megatron_critic(project: str, fork: str = "") -> str:
    return (
        f"{project} {fork}verl/trainer/config/critic/megatron_critic.yaml:54-63 — the Megatron critic's model has "
        "no enable_gradient_checkpointing (verl 0.5.0 fork); " + NOT_OVERRIDE
    )


# (project, script, line, rule, verdict, "project path:line — what it does")
VERDICTS = [
    # ---- OpenOneRec: two forks of verl, each with verl's own examples of its base -------------
    *[
        (
            OOR,
            "verl_rl/examples/grpo_trainer/run_deepseek671b_math_megatron.sh",
            line,
            "override-syntax",
            TRUE,
            f"the script's placeholder `{what}` left as is; " + BAD_SYNTAX + " ('<')",
        )
        for line, what in ((62, "<path_to_dsv3_config>"), (100, "<path_to_dist_ckpt>"), (101, "<path_to_dist_ckpt>"))
    ],
    (
        OOR,
        "verl_distillation/examples/grpo_trainer/run_deepseek671b_math_megatron_80gb.sh",
        68,
        "override-syntax",
        TRUE,
        "the script's placeholder `<path_to_dsv3_config>` left as is; " + BAD_SYNTAX + " ('<')",
    ),
    (
        OOR,
        "verl_distillation/examples/grpo_trainer/run_gptoss_20b.sh",
        59,
        "override-append-existing",
        TRUE,
        "OpenOneRec verl_distillation/verl/trainer/config/engine/fsdp.yaml:32 `model_dtype: fp32`; " + APPEND,
    ),
    (
        OOR,
        "verl_distillation/examples/grpo_trainer/run_gptoss_20b.sh",
        64,
        "override-missing-key",
        TRUE,
        "OpenOneRec verl_distillation/verl/trainer/config/rollout/rollout.yaml:119 the sglang engine config has no "
        "attention_backend; " + NOT_OVERRIDE,
    ),
    *[
        (
            OOR,
            f"{fork}/examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh",
            6,
            "escaped-blank",
            TRUE,
            "bash: `reweight_method=pow \\  # ...` escapes a blank, so python3 gets ' ' and line 7 runs as a command "
            "of its own (tests/test_bash_differential.py runs real bash on the same form)",
        )
        for fork in ("verl_rl", "verl_distillation")
    ],
    *[
        (project, script, 6, "override-syntax", TRUE, "the argument ' ' bash passes (line 6); " + BAD_SYNTAX)
        for project, script in (
            (OOR, "verl_rl/examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh"),
            (OOR, "verl_distillation/examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh"),
            (INTUITOR, "verl-intuitor/examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh"),
        )
    ],
    (
        OOR,
        "verl_distillation/examples/ppo_trainer/run_deepseek_full_hh_rlhf.sh",
        31,
        "override-missing-key",
        TRUE,
        "OpenOneRec verl_distillation/verl/trainer/config/reward_model/megatron_reward_model.yaml:23 param_offload is "
        "under megatron:, not reward_model; " + NOT_OVERRIDE,
    ),
    (
        OOR,
        "verl_rl/examples/ppo_trainer/run_deepseek_full_hh_rlhf.sh",
        32,
        "override-missing-key",
        TRUE,
        "OpenOneRec verl_rl/verl/trainer/config/reward_model/megatron_reward_model.yaml:19 param_offload is under "
        "megatron:, not reward_model; " + NOT_OVERRIDE,
    ),
    (
        OOR,
        "verl_rl/examples/ppo_trainer/run_deepseek_full_hh_rlhf.sh",
        26,
        "override-missing-key",
        TRUE,
        _megatron_critic("OpenOneRec", "verl_rl/"),
    ),
    (
        OOR,
        "verl_rl/examples/ppo_trainer/run_qwen1.5_moe_a2.7b-gsm8k_megatron.sh",
        57,
        "override-missing-key",
        TRUE,
        _megatron_critic("OpenOneRec", "verl_rl/"),
    ),
    *[
        (
            OOR,
            "verl_distillation/examples/rollout_importance_sampling/run_with_rollout_is.sh",
            62,
            "verl-check",
            TRUE,
            f"OpenOneRec verl_distillation/verl/trainer/main_ppo.py:276 validate_config, which raises at {where}: the "
            f"launch sets no micro batch size (adv_estimator=gae at the script's line 54 uses a critic)",
        )
        for where in (
            "verl/workers/config/actor.py:137-138 (actor)",
            "verl/utils/config.py:141-142 (rollout log-prob)",
            "verl/workers/config/critic.py:140-141 (critic)",
        )
    ],
    (
        OOR,
        "verl_distillation/examples/sglang_multiturn/run_qwen2.5-0.5b_gsm8k_multiturn_w_interaction.sh",
        27,
        "config-field",
        TRUE,
        "OpenOneRec verl_distillation/verl/workers/config/model.py:31 HFModelConfig has no "
        "enable_activation_offloading; verl/workers/fsdp_workers.py:580 builds it with omega_conf_to_dataclass(..., "
        "dataclass_type=HFModelConfig), which merges into OmegaConf.structured and refuses a key the dataclass lacks",
    ),
    (
        OOR,
        "verl_rl/examples/grpo_trainer/run_qwen2-7b_seq_balance_math_megatron.sh",
        13,
        "verl-check",
        TRUE,
        "OpenOneRec verl_rl/verl/trainer/ppo/ray_trainer.py:410 `megatron_dp * "
        "config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu` with the micro batch null (dynamic batch size): "
        "TypeError in _validate_config",
    ),
    *[
        (OOR, f"{fork}/{script}", line, "unassigned-variable", TRUE, f"{EMPTY}: {why}")
        for fork, script, line, why in (
            (
                "verl_distillation",
                "examples/grpo_trainer/run_deepseek671b_math_megatron_80gb.sh",
                116,
                "CKPT_DIR: no line sets it",
            ),
            (
                "verl_distillation",
                "examples/grpo_trainer/run_gptoss_20b.sh",
                39,
                "gsm8k_train_path: the script sets train_files",
            ),
            (
                "verl_distillation",
                "examples/grpo_trainer/run_gptoss_20b.sh",
                40,
                "gsm8k_test_path: the script sets test_files",
            ),
            (
                "verl_distillation",
                "examples/grpo_trainer/run_qwen3_8b_grpo_sglang_1k_spmd_npu.sh",
                26,
                "$pwd is not $PWD",
            ),
            (
                "verl_distillation",
                "examples/grpo_trainer/run_qwen3_8b_grpo_sglang_32k_spmd_npu.sh",
                26,
                "$pwd is not $PWD",
            ),
            (
                "verl_distillation",
                "examples/grpo_trainer/run_qwen3_vl-235b-megatron.sh",
                38,
                "RAY_DATA_HOME: nothing sets it",
            ),
            (
                "verl_distillation",
                "examples/grpo_trainer/run_qwen3_vl-30b-megatron.sh",
                39,
                "RAY_DATA_HOME: nothing sets it",
            ),
            (
                "verl_distillation",
                "examples/grpo_trainer/run_qwen3_vl-8b-megatron.sh",
                36,
                "RAY_DATA_HOME: nothing sets it",
            ),
            (
                "verl_distillation",
                "examples/grpo_trainer/run_qwen3moe-30b_megatron_96gb.sh",
                97,
                "aime24_test_path: no line sets it",
            ),
            (
                "verl_distillation",
                "examples/ppo_trainer/run_moonlight16b_a3b_gsm8k_megatron.sh",
                55,
                "LLM: the script sets HF_MODEL_PATH",
            ),
            (
                "verl_distillation",
                "examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_vllm_fsdp.sh",
                35,
                "use_kl_loss: never set",
            ),
            (
                "verl_distillation",
                "examples/tuning/70b/qwen2-70b_grpo_32_h20_fsdp_vllm.sh",
                9,
                "data_path: the script sets gsm8k_train_path",
            ),
            ("verl_rl", "examples/grpo_trainer/run_deepseek671b_math_megatron.sh", 102, "CKPT_DIR: no line sets it"),
            (
                "verl_rl",
                "examples/ppo_trainer/run_moonlight16b_a3b_gsm8k_megatron.sh",
                55,
                "LLM: the script sets HF_MODEL_PATH",
            ),
            (
                "verl_rl",
                "examples/tuning/70b/qwen2-70b_grpo_32_h20_fsdp_vllm.sh",
                9,
                "data_path: the script sets gsm8k_train_path",
            ),
        )
    ],
    # ---- RL-Factory: a fork of verl 0.5.0 at the root, its own configs inside it ---------------
    *[
        (RLF, script, line, "override-missing-key", TRUE, why)
        for why, places in (
            (
                _megatron_critic("RL-Factory"),
                (
                    ("examples/checkpoint/run_deepseek_megatron_ckpt.sh", 33),
                    ("examples/checkpoint/run_deepseek_megatron_ckpt.sh", 75),
                    ("examples/checkpoint/run_qwen_megatron_ckpt.sh", 33),
                    ("examples/checkpoint/run_qwen_megatron_ckpt.sh", 75),
                    ("examples/ppo_trainer/run_deepseek_full_hh_rlhf.sh", 26),
                    ("examples/ppo_trainer/run_deepseek_math_gsm8k_megatron.sh", 41),
                    ("examples/ppo_trainer/run_deepseek_megatron.sh", 39),
                    ("examples/ppo_trainer/run_qwen1.5_moe_a2.7b-gsm8k_megatron.sh", 59),
                    ("examples/ppo_trainer/run_qwen2-7b_math_gsm8k_megatron.sh", 39),
                    ("examples/ppo_trainer/run_qwen2-7b_megatron.sh", 39),
                ),
            ),
            (
                _megatron_model("RL-Factory"),
                (
                    ("examples/grpo_trainer/run_deepseek7b_llm_math_megatron.sh", 35),
                    ("examples/grpo_trainer/run_deepseek7b_llm_megatron.sh", 15),
                    ("examples/grpo_trainer/run_deepseek7b_llm_megatron.sh", 23),
                    ("examples/grpo_trainer/run_qwen2-7b_math_megatron.sh", 35),
                    ("examples/grpo_trainer/run_qwen2-7b_megatron.sh", 25),
                    ("examples/grpo_trainer/run_qwen2-7b_sgl_megatron.sh", 32),
                    ("examples/grpo_trainer/run_qwen2_5-7b_math_megatron_diff_tp.sh", 35),
                    ("examples/ppo_trainer/run_qwen2-7b_megatron.sh", 28),
                    ("examples/tuning/32b/qwen2_32B_grpo_8_h20_megatron_vllm.sh", 35),
                ),
            ),
        )
        for script, line in places
    ],
    *[
        (
            RLF,
            script,
            line,
            "override-missing-key",
            TRUE,
            "RL-Factory verl/trainer/config/rollout/rollout.yaml has no chat_scheduler (verl 0.4.1 removed it); "
            + NOT_OVERRIDE,
        )
        for script, line in (
            ("examples/grpo_trainer/run_qwen2-7b_seq_balance.sh", 39),
            ("examples/ppo_trainer/run_qwen2-7b_seq_balance.sh", 41),
        )
    ],
    (
        RLF,
        "examples/ppo_trainer/run_deepseek_full_hh_rlhf.sh",
        32,
        "override-missing-key",
        TRUE,
        "RL-Factory verl/trainer/config/reward_model/megatron_reward_model.yaml:17-19 param_offload is under "
        "megatron:, not reward_model; " + NOT_OVERRIDE,
    ),
    *[
        (
            RLF,
            script,
            line,
            "override-append-existing",
            TRUE,
            "RL-Factory verl/trainer/config/ppo_megatron_trainer.yaml:111 and ppo_trainer.yaml:293 "
            "`val_before_train: True`; " + APPEND,
        )
        for script, line in (
            ("examples/ppo_trainer/run_deepseek_megatron.sh", 53),
            ("examples/rl_factory/reward_rollout_test.sh", 54),
        )
    ],
    # the project's rl_factory scripts that give no --config-name: main_ppo composes verl's own
    # ppo_trainer, which has none of the project's keys (they are in rl_factory_ppo_trainer.yaml:8-60);
    # one mistake, one finding at its first key, the others its related lines
    *[
        (
            RLF,
            f"examples/rl_factory/{script}",
            line,
            "override-missing-key",
            TRUE,
            "RL-Factory verl/trainer/main_ppo.py:42 @hydra.main(config_name='ppo_trainer') and no --config-name: the "
            "keys are only in verl/trainer/config/rl_factory_ppo_trainer.yaml; " + NOT_OVERRIDE,
        )
        for script, line in (("centralized_tool_manager.sh", 25), ("reward_rollout_test.sh", 25), ("search_ppo.sh", 31))
    ],
    *[
        (
            RLF,
            script,
            line,
            "sequence-length",
            TRUE,
            "RL-Factory verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py:142-146 raises ValueError when "
            "max_num_batched_tokens (8192, rollout/rollout.yaml:44) < prompt + response with chunked prefill on "
            "(rl_factory_ppo_trainer.yaml:69, ppo_trainer.yaml:103); the sync rollout (rollout.yaml:5) builds it",
        )
        for script, line in (
            ("recipe/travelplanner/main_grpo.sh", 17),
            ("examples/rl_factory/centralized_tool_manager.sh", 13),
        )
    ],
    *[
        (
            RLF,
            script,
            35,
            "config-value",
            TRUE,
            "RL-Factory verl/workers/fsdp_workers.py:522-608 builds hf, vllm or sglang and raises NotImplementedError "
            "for any other rollout name (sglang_async is no longer one)",
        )
        for script in (
            "examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn.sh",
            "examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn_4xgpu.sh",
        )
    ],
    *[
        (RLF, script, line, "unassigned-variable", TRUE, f"{EMPTY}: {why}")
        for script, line, why in (
            (
                "examples/rl_factory/qwen25vl_tool.sh",
                59,
                "REWARD_MODEL_PATH: search_ppo.sh exports it, not for this one",
            ),
            (
                "examples/tuning/70b/qwen2-70b_grpo_32_h20_fsdp_vllm.sh",
                9,
                "data_path: the script sets gsm8k_train_path",
            ),
            ("recipe/travelplanner/main_grpo.sh", 49, "REWARD_MODEL_PATH: nothing in the repository sets it"),
        )
    ],
    # ---- rStar: a fork of verl as a git submodule, its own entry module --------------------------
    *[
        (
            RSTAR,
            f"examples/{script}",
            24,
            "unassigned-variable",
            UNSURE,
            "bash: MODEL_PATH is read from the caller's environment (the corpus README says so); the project's README, "
            "not kept here, may say to export it; the copy holds nothing that does",
        )
        for script in ("aime_eval.sh", "math500_eval.sh")
    ],
    # ---- Intuitor: a fork of verl in a hyphenated folder ----------------------------------------
    *[
        (
            INTUITOR,
            "verl-intuitor/examples/grpo_trainer/run_deepseek671b_math_megatron.sh",
            line,
            "override-syntax",
            TRUE,
            f"the script's placeholder `{what}` left as is; " + BAD_SYNTAX + " ('<')",
        )
        for line, what in ((62, "<path_to_dsv3_config>"), (100, "<path_to_dist_ckpt>"), (101, "<path_to_dist_ckpt>"))
    ],
    (
        INTUITOR,
        "verl-intuitor/examples/grpo_trainer/run_qwen2-7b_seq_balance_math_megatron.sh",
        13,
        "verl-check",
        TRUE,
        "Intuitor verl-intuitor/verl/trainer/ppo/ray_trainer.py:432 `megatron_dp * "
        "config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu` with the micro batch null: TypeError",
    ),
    (
        INTUITOR,
        "verl-intuitor/examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh",
        6,
        "escaped-blank",
        TRUE,
        "bash: a blank after the line's backslash ends the command there",
    ),
    (
        INTUITOR,
        "verl-intuitor/examples/ppo_trainer/run_deepseek_full_hh_rlhf.sh",
        32,
        "override-missing-key",
        TRUE,
        "Intuitor verl-intuitor/verl/trainer/config/ppo_megatron_trainer.yaml reward_model: param_offload is under "
        "megatron:, not reward_model; " + NOT_OVERRIDE,
    ),
    (
        INTUITOR,
        "verl-intuitor/math_intuitor_olmo.sh",
        13,
        "override-append-existing",
        TRUE,
        "Intuitor verl-intuitor/verl/trainer/config/data/legacy_data.yaml:76 `trust_remote_code: False`; " + APPEND,
    ),
    *[
        (INTUITOR, f"verl-intuitor/{script}", line, "unassigned-variable", TRUE, f"{EMPTY}: {why}")
        for script, line, why in (
            ("examples/grpo_trainer/run_deepseek671b_math_megatron.sh", 102, "CKPT_DIR: no line sets it"),
            ("examples/ppo_trainer/run_moonlight16b_a3b_gsm8k_megatron.sh", 55, "LLM: the script sets HF_MODEL_PATH"),
            (
                "examples/tuning/70b/qwen2-70b_grpo_32_h20_fsdp_vllm.sh",
                9,
                "data_path: the script sets gsm8k_train_path",
            ),
        )
    ],
]


@contextlib.contextmanager
def _as_a_user_runs_it(folder: str):
    """From the project's root, the pinned releases' wheels from make's folder (offline)."""
    before, wheels = os.getcwd(), os.environ.get("VERL_PREFLIGHT_WHEELS")
    os.chdir(folder)
    if os.path.isdir(WHEELS):
        os.environ["VERL_PREFLIGHT_WHEELS"] = WHEELS
    try:
        yield
    finally:
        os.chdir(before)
        if wheels is None:
            os.environ.pop("VERL_PREFLIGHT_WHEELS", None)
        else:
            os.environ["VERL_PREFLIGHT_WHEELS"] = wheels


@pytest.fixture(scope="module")
def documents():
    """{project: the JSON report of `validate-scripts .` run at its root}."""
    out = {}
    for project in sorted(os.listdir(PROJECTS)):
        folder = os.path.join(PROJECTS, project)
        if not os.path.isdir(folder):
            continue
        buf, err = io.StringIO(), io.StringIO()
        with _as_a_user_runs_it(folder), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
            code = main(["--no-cache", "--format", "json", "."])
        assert code in (0, 1) and "internal error" not in err.getvalue(), (project, err.getvalue()[-2000:])
        out[project] = json.loads(buf.getvalue())
    return out


def _origin_of(project: str, script: str):
    prefixes = ORIGINS[project]
    return prefixes[max((p for p in prefixes if script.startswith(p)), key=len)]


def test_every_launch_is_checked_against_the_verl_its_project_runs(documents):
    for project, doc in documents.items():
        for script in doc["scripts"]:
            for profile in script["profiles"]:
                for launch in profile["launches"]:
                    where = (project, script["path"], launch["line"])
                    verl = launch["target"]["verl"]
                    assert (verl["origin"], verl["version"]) == _origin_of(project, script["path"]), where
                    assert launch["unchecked"] is None and launch["target"]["config"]["checked"], where
                    if project in ENTRIES:
                        assert (launch["module"], launch["config_name"]) in ENTRIES[project], where


def test_every_script_that_launches_nothing_says_what_it_runs_instead(documents):
    for project, doc in documents.items():
        found = set()
        for script in doc["scripts"]:
            if not any(p["launches"] for p in script["profiles"]):
                if script["no_launch"] is None:  # the evaluator stopped in some profile: it says where and why
                    statuses = {p["status"] for p in script["profiles"]}
                    assert "incomplete" in statuses <= {"incomplete", "no-launch"}, (project, script["path"])
                    found.add((script["path"], INCOMPLETE))
                    continue
                runs = script["no_launch"]["runs"]
                found.add((script["path"], runs[0]["program"] if runs else None))
        assert found == NO_LAUNCH.get(project, set()), project


@pytest.fixture(scope="module")
def reported(documents):
    """{(project, script, line, rule): severity} of the errors and warnings reported."""
    return {
        (project, f["path"], f["line"], said["rule"]): said["severity"]
        for project, doc in documents.items()
        for f in doc["findings"]
        for said in (f, *f["also"])
        if said["severity"] in ("error", "warning")
    }


def _places(verdict: str) -> set:
    return {(p, s, line, rule) for p, s, line, rule, v, _ in VERDICTS if v == verdict}


def test_every_finding_has_a_verdict(reported):
    judged = _places(TRUE) | _places(FALSE) | _places(UNSURE)
    assert not sorted(set(reported) - judged)


def test_true_findings_are_still_reported_and_false_ones_are_not(reported):
    assert not sorted(_places(TRUE) - set(reported))
    assert not sorted(_places(FALSE) & set(reported))


def test_errors_are_95_and_warnings_80_percent_true(reported):
    true = _places(TRUE)
    for severity, least in (("error", 0.95), ("warning", 0.80)):
        said = [place for place, level in reported.items() if level == severity]
        assert said, severity
        share = sum(place in true for place in said) / len(said)
        assert share >= least, (severity, share, sorted(p for p in said if p not in true))


def test_each_verdict_cites_the_code_that_decides_it():
    for project, script, line, rule, verdict, why in VERDICTS:
        assert verdict in (TRUE, FALSE, UNSURE) and line > 0 and rule
        assert why and ("hydra" in why or ".py" in why or ".yaml" in why or "bash" in why), (project, script, line)
        assert os.path.isfile(os.path.join(PROJECTS, project, script)), script
