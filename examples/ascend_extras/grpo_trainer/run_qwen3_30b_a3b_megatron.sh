#!/usr/bin/env bash
# GRPO training of Qwen3-30B-A3B (MoE) with 2k prompt + 8k response on
# DAPO-Math-17k (validation on AIME-2024), using verl's Megatron engine on
# Ascend NPU and SGLang for rollout.
#
# verl version
#   Written for verl 0.9.1's config tree (the release tools/validate_scripts.py
#   checks against). Reference: verl's own copy of this script at commit
#   0664ab2d4 (PR #6429 merged), verl main.
#
# Hardware
#   1 Atlas A3 node x 16 NPU dies (8 cards x 2 dies, 64 GB each).
#
# Requirements
#   * a CANN base image with torch and the matching torch_npu
#   * Megatron-LM with MindSpeed, Megatron-Bridge, SGLang with its Ascend
#     attention backend
#   * the model converted to a Megatron distributed checkpoint at
#     MCORE_MODEL_PATH (the HF weights stay at MODEL_PATH for the tokenizer
#     and the rollout)
#
# Note on use_mbridge
#   verl's Megatron engine asserts "use_mbridge must be True" when it starts
#   (the check came with verl PR #4528), so actor and ref both set
#   megatron.use_mbridge=True even though the weights come from the
#   distributed checkpoint.
#
# Parallelism (as in verl's script)
#   actor / ref: TP=4 PP=1 CP=1 EP=4 ETP=4
#   rollout:     TP=4, data parallel 1, expert parallel 1
#
# Differences from verl's script (0664ab2d4), each on purpose
#   * no profiler block (global_profiler.tool=npu, save_path=/profpath,
#     actor and rollout profiler on rank 0): it profiles every step into a
#     root-level directory; add it back when you want a trace.
#   * no megatron.grad_offload: verl 0.9.1 has no such key.
#   * no --config-path=config (main_ppo's own config directory already) and
#     --config-name without the .yaml suffix: the same file.
#   * knob names follow this project (MODEL_PATH, ROLLOUT_TP, ...); the model
#     defaults to ~/models/<name> instead of a path relative to the working
#     directory.
#
# Usage
#   bash examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_megatron.sh [HYDRA_OVERRIDE ...]
#   Extra arguments go to verl last and win over the values set here.

set -xeuo pipefail

PROJECT_NAME=${PROJECT_NAME:-DAPO-Qwen3-30b-A3B-BASE-MATH}
EXPERIMENT_NAME=${EXPERIMENT_NAME:-DAPO-Qwen3-30B-A3B-BASE-Megatron-SGLang}

# ---------------------------------------------------------------------------
# Ascend node environment
# ---------------------------------------------------------------------------
export HCCL_CONNECT_TIMEOUT=1500
export HCCL_HOST_SOCKET_PORT_RANGE=60000-60050
export HCCL_NPU_SOCKET_PORT_RANGE=61000-61050

export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15

export DISABLE_L2_CACHE=1
export TASK_QUEUE_ENABLE=1

# ---------------------------------------------------------------------------
# User-adjustable settings
# ---------------------------------------------------------------------------
NNODES=${NNODES:-1}
NDEVICES_PER_NODE=${NDEVICES_PER_NODE:-16}

MODEL_PATH=${MODEL_PATH:-${HOME}/models/Qwen3-30B-A3B}
MCORE_MODEL_PATH=${MCORE_MODEL_PATH:-${HOME}/models/Qwen3-30B-A3B-mcore}
RAY_DATA_HOME=${RAY_DATA_HOME:-${HOME}/verl}
CKPTS_DIR=${CKPTS_DIR:-${RAY_DATA_HOME}/ckpts/${PROJECT_NAME}/${EXPERIMENT_NAME}}

DATA_DIR=${DATA_DIR:-${RAY_DATA_HOME}/dataset}
TRAIN_FILE=${TRAIN_FILE:-${DATA_DIR}/dapo-math-17k.parquet}
TEST_FILE=${TEST_FILE:-${DATA_DIR}/aime-2024.parquet}

MAX_PROMPT_LENGTH=$((1024 * 2))
MAX_RESPONSE_LENGTH=$((1024 * 8))

TRAIN_BATCH_SIZE=16
PPO_MINI_BATCH_SIZE=16
ROLLOUT_N=8

KL_COEF=0.0
KL_LOSS_COEF=0.001

OFFLOAD=${OFFLOAD:-True}
USE_DYNAMIC_BSZ=False
MAX_TOKEN_LEN_PER_GPU=$((MAX_PROMPT_LENGTH + MAX_RESPONSE_LENGTH))

TP=${TP:-4}
EP=${EP:-4}
ETP=${ETP:-4}
PP=${PP:-1}
CP=${CP:-1}

ROLLOUT_TP=${ROLLOUT_TP:-4}
ROLLOUT_DP=${ROLLOUT_DP:-1}
ROLLOUT_EP=${ROLLOUT_EP:-1}
GPU_MEMORY_UTILIZATION=${GPU_MEMORY_UTILIZATION:-0.5}

# ---------------------------------------------------------------------------
# Hydra overrides, grouped by concern
# ---------------------------------------------------------------------------
DATA=(
    data.train_files="${TRAIN_FILE}"
    data.val_files="${TEST_FILE}"
    data.prompt_key=prompt
    data.train_batch_size="${TRAIN_BATCH_SIZE}"
    data.max_prompt_length="${MAX_PROMPT_LENGTH}"
    data.max_response_length="${MAX_RESPONSE_LENGTH}"
    data.filter_overlong_prompts=False
    data.truncation=left
)

MODEL=(
    actor_rollout_ref.model.path="${MODEL_PATH}"
    actor_rollout_ref.model.use_remove_padding=True
)

ALGORITHM=(
    algorithm.adv_estimator=grpo
    algorithm.use_kl_in_reward=False
    algorithm.kl_ctrl.kl_coef="${KL_COEF}"
)

ACTOR=(
    actor_rollout_ref.actor.use_torch_compile=False
    actor_rollout_ref.actor.use_dynamic_bsz="${USE_DYNAMIC_BSZ}"
    actor_rollout_ref.actor.use_kl_loss=True
    actor_rollout_ref.actor.kl_loss_coef="${KL_LOSS_COEF}"
    actor_rollout_ref.actor.entropy_coeff=0
    actor_rollout_ref.actor.ppo_epochs=1
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu="${MAX_TOKEN_LEN_PER_GPU}"
    actor_rollout_ref.actor.ppo_mini_batch_size="${PPO_MINI_BATCH_SIZE}"
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.actor.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.actor.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.actor.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.actor.megatron.param_offload="${OFFLOAD}"
    actor_rollout_ref.actor.megatron.optimizer_offload="${OFFLOAD}"
    actor_rollout_ref.actor.megatron.dist_checkpointing_path="${MCORE_MODEL_PATH}"
    actor_rollout_ref.actor.megatron.use_dist_checkpointing=True
    actor_rollout_ref.actor.megatron.use_mbridge=True
    +actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True
    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform
    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full
    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_num_layers=1
)

# The ref sets no override_transformer_config key: it inherits the actor's.
REF=(
    actor_rollout_ref.ref.use_torch_compile=False
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.ref.log_prob_use_dynamic_bsz="${USE_DYNAMIC_BSZ}"
    actor_rollout_ref.ref.log_prob_max_token_len_per_gpu="${MAX_TOKEN_LEN_PER_GPU}"
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.ref.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.ref.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.ref.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.ref.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.ref.megatron.param_offload="${OFFLOAD}"
    actor_rollout_ref.ref.megatron.dist_checkpointing_path="${MCORE_MODEL_PATH}"
    actor_rollout_ref.ref.megatron.use_dist_checkpointing=True
    actor_rollout_ref.ref.megatron.use_mbridge=True
)

ROLLOUT=(
    actor_rollout_ref.rollout.name=sglang
    +actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend="ascend"
    actor_rollout_ref.rollout.n="${ROLLOUT_N}"
    actor_rollout_ref.rollout.top_p=1.0
    actor_rollout_ref.rollout.top_k=-1
    actor_rollout_ref.rollout.temperature=1.0
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_use_dynamic_bsz="${USE_DYNAMIC_BSZ}"
    actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu="${MAX_TOKEN_LEN_PER_GPU}"
    actor_rollout_ref.rollout.gpu_memory_utilization="${GPU_MEMORY_UTILIZATION}"
    actor_rollout_ref.rollout.tensor_model_parallel_size="${ROLLOUT_TP}"
    actor_rollout_ref.rollout.data_parallel_size="${ROLLOUT_DP}"
    actor_rollout_ref.rollout.expert_parallel_size="${ROLLOUT_EP}"
    +actor_rollout_ref.rollout.engine_kwargs.sglang.enable_dp_attention=False
    +actor_rollout_ref.rollout.engine_kwargs.sglang.chunked_prefill_size=-1
    actor_rollout_ref.rollout.enforce_eager=False
    actor_rollout_ref.rollout.val_kwargs.n=1
    actor_rollout_ref.rollout.val_kwargs.do_sample=True
    actor_rollout_ref.rollout.val_kwargs.top_p=1.0
    actor_rollout_ref.rollout.val_kwargs.top_k=-1
    actor_rollout_ref.rollout.val_kwargs.temperature=1.0
)

TRAINER=(
    trainer.logger='["console"]'
    trainer.project_name="${PROJECT_NAME}"
    trainer.experiment_name="${EXPERIMENT_NAME}"
    trainer.nnodes="${NNODES}"
    trainer.n_gpus_per_node="${NDEVICES_PER_NODE}"
    trainer.device=npu
    trainer.total_epochs=15
    trainer.val_before_train=False
    trainer.test_freq=-1
    trainer.save_freq=-1
    trainer.default_local_dir="${CKPTS_DIR}"
)

python3 -m verl.trainer.main_ppo \
    --config-name=ppo_megatron_trainer \
    "${DATA[@]}" \
    "${MODEL[@]}" \
    "${ACTOR[@]}" \
    "${REF[@]}" \
    "${ROLLOUT[@]}" \
    "${ALGORITHM[@]}" \
    "${TRAINER[@]}" \
    "$@"
