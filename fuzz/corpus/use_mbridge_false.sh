#!/usr/bin/env bash
# Regression fixture: the Ascend Qwen3-30B-A3B GRPO launch as it was before
# verl PR #6429. It loads a Megatron distributed checkpoint and passes
# megatron.use_mbridge=False for actor and ref, but since verl PR #4530 the
# Megatron engine asserts "use_mbridge must be True" when it starts, so the
# job fails at start-up. PR #6429 set both to True (see
# examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_megatron.sh).
# Expected finding: use-mbridge on the actor and the ref line; nothing else.
#
# GRPO training of Qwen3-30B-A3B (MoE) with 2k prompt + 8k response on
# DAPO-Math-17k (validation on AIME-2024), using verl's Megatron engine on
# Ascend NPU and vLLM-Ascend for rollout. Rewards use verl's "dapo" reward
# manager (math answer checking on the data_source of each sample).
#
# Hardware
#   1 Atlas A3 node x 16 NPU dies (8 cards x 2 dies, 64 GB each).
#
# Requirements
#   * a CANN base image with torch and the matching torch_npu
#   * Megatron-LM with MindSpeed, Megatron-Bridge, vLLM-Ascend
#   * the model converted to a Megatron distributed checkpoint at
#     MCORE_MODEL_PATH (the HF weights stay at MODEL_PATH for the tokenizer
#     and the rollout)
#
# Tested parallelism
#   actor / ref: TP=4 PP=1 CP=1 EP=4 ETP=4
#   rollout:     TP=4
#
# Usage
#   bash tests/fixtures/regressions/use_mbridge_false.sh [HYDRA_OVERRIDE ...]
#   Extra arguments go to verl last and win over the values set here.

set -euo pipefail

# ---------------------------------------------------------------------------
# Ascend node environment
# ---------------------------------------------------------------------------
export HCCL_CONNECT_TIMEOUT=${HCCL_CONNECT_TIMEOUT:-1200}
export HCCL_EXEC_TIMEOUT=${HCCL_EXEC_TIMEOUT:-3600}
export HCCL_IF_BASE_PORT=${HCCL_IF_BASE_PORT:-48890}
export HCCL_BUFFSIZE=${HCCL_BUFFSIZE:-400}
export TASK_QUEUE_ENABLE=${TASK_QUEUE_ENABLE:-1}
export CPU_AFFINITY_CONF=${CPU_AFFINITY_CONF:-1}
export PYTORCH_NPU_ALLOC_CONF=${PYTORCH_NPU_ALLOC_CONF:-expandable_segments:True}
export RAY_DEDUP_LOGS=${RAY_DEDUP_LOGS:-0}

# ---------------------------------------------------------------------------
# User-adjustable settings
# ---------------------------------------------------------------------------
MODEL_PATH=${MODEL_PATH:-${HOME}/models/Qwen3-30B-A3B}
MCORE_MODEL_PATH=${MCORE_MODEL_PATH:-${HOME}/models/Qwen3-30B-A3B-mcore}
DATA_DIR=${DATA_DIR:-${HOME}/data}
TRAIN_FILE=${TRAIN_FILE:-${DATA_DIR}/dapo-math-17k.parquet}
TEST_FILE=${TEST_FILE:-${DATA_DIR}/aime-2024.parquet}

PROJECT_NAME=${PROJECT_NAME:-verl_grpo_dapo_math}
EXPERIMENT_NAME=${EXPERIMENT_NAME:-qwen3_30b_a3b_megatron_npu}

NNODES=${NNODES:-1}
NDEVICES_PER_NODE=${NDEVICES_PER_NODE:-16}

TP=${TP:-4}
PP=${PP:-1}
CP=${CP:-1}
EP=${EP:-4}
ETP=${ETP:-4}
ROLLOUT_TP=${ROLLOUT_TP:-4}

MAX_PROMPT_LENGTH=${MAX_PROMPT_LENGTH:-2048}
MAX_RESPONSE_LENGTH=${MAX_RESPONSE_LENGTH:-8192}
MAX_TOKEN_LEN_PER_GPU=${MAX_TOKEN_LEN_PER_GPU:-10240}

TRAIN_BATCH_SIZE=${TRAIN_BATCH_SIZE:-64}
PPO_MINI_BATCH_SIZE=${PPO_MINI_BATCH_SIZE:-16}
PPO_MICRO_BATCH_SIZE_PER_GPU=${PPO_MICRO_BATCH_SIZE_PER_GPU:-1}
LOG_PROB_MICRO_BATCH_SIZE_PER_GPU=${LOG_PROB_MICRO_BATCH_SIZE_PER_GPU:-1}
ROLLOUT_N=${ROLLOUT_N:-8}

ACTOR_LR=${ACTOR_LR:-1e-6}
KL_LOSS_COEF=${KL_LOSS_COEF:-0.001}
GPU_MEMORY_UTILIZATION=${GPU_MEMORY_UTILIZATION:-0.7}
OFFLOAD=${OFFLOAD:-True}

TOTAL_EPOCHS=${TOTAL_EPOCHS:-10}
SAVE_FREQ=${SAVE_FREQ:--1}
TEST_FREQ=${TEST_FREQ:-10}

# ---------------------------------------------------------------------------
# Hydra overrides, grouped by concern
# ---------------------------------------------------------------------------
DATA=(
    data.train_files="${TRAIN_FILE}"
    data.val_files="${TEST_FILE}"
    data.train_batch_size="${TRAIN_BATCH_SIZE}"
    data.max_prompt_length="${MAX_PROMPT_LENGTH}"
    data.max_response_length="${MAX_RESPONSE_LENGTH}"
    data.filter_overlong_prompts=True
    data.truncation=error
)

MODEL=(
    actor_rollout_ref.model.path="${MODEL_PATH}"
    actor_rollout_ref.model.use_remove_padding=True
)

ACTOR=(
    actor_rollout_ref.actor.optim.lr="${ACTOR_LR}"
    actor_rollout_ref.actor.ppo_mini_batch_size="${PPO_MINI_BATCH_SIZE}"
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu="${PPO_MICRO_BATCH_SIZE_PER_GPU}"
    actor_rollout_ref.actor.use_dynamic_bsz=True
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu="${MAX_TOKEN_LEN_PER_GPU}"
    actor_rollout_ref.actor.use_kl_loss=True
    actor_rollout_ref.actor.kl_loss_coef="${KL_LOSS_COEF}"
    actor_rollout_ref.actor.kl_loss_type=low_var_kl
    actor_rollout_ref.actor.entropy_coeff=0
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.actor.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.actor.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.actor.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.actor.megatron.use_dist_checkpointing=True
    actor_rollout_ref.actor.megatron.dist_checkpointing_path="${MCORE_MODEL_PATH}"
    actor_rollout_ref.actor.megatron.use_mbridge=False  # expect: use-mbridge
    actor_rollout_ref.actor.megatron.param_offload="${OFFLOAD}"
    actor_rollout_ref.actor.megatron.optimizer_offload="${OFFLOAD}"
    +actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True
    actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full
    actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform
    actor_rollout_ref.actor.megatron.override_transformer_config.recompute_num_layers=1
)

ROLLOUT=(
    actor_rollout_ref.rollout.name=vllm
    actor_rollout_ref.rollout.tensor_model_parallel_size="${ROLLOUT_TP}"
    actor_rollout_ref.rollout.gpu_memory_utilization="${GPU_MEMORY_UTILIZATION}"
    actor_rollout_ref.rollout.n="${ROLLOUT_N}"
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu="${LOG_PROB_MICRO_BATCH_SIZE_PER_GPU}"
)

REF=(
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.ref.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.ref.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.ref.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.ref.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.ref.megatron.use_dist_checkpointing=True
    actor_rollout_ref.ref.megatron.dist_checkpointing_path="${MCORE_MODEL_PATH}"
    actor_rollout_ref.ref.megatron.use_mbridge=False  # expect: use-mbridge
    actor_rollout_ref.ref.megatron.param_offload="${OFFLOAD}"
    # ref.megatron.override_transformer_config is an interpolation of the actor's
    # dict, which already holds use_flash_attn once ACTOR is applied: a single
    # '+' would fail there, '++' adds or overrides in any order.
    ++actor_rollout_ref.ref.megatron.override_transformer_config.use_flash_attn=True
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu="${LOG_PROB_MICRO_BATCH_SIZE_PER_GPU}"
)

ALGORITHM=(
    algorithm.adv_estimator=grpo
    algorithm.use_kl_in_reward=False
)

REWARD=(
    reward.reward_manager.name=dapo
)

TRAINER=(
    trainer.device=npu
    trainer.critic_warmup=0
    trainer.logger='["console"]'
    trainer.project_name="${PROJECT_NAME}"
    trainer.experiment_name="${EXPERIMENT_NAME}"
    trainer.nnodes="${NNODES}"
    trainer.n_gpus_per_node="${NDEVICES_PER_NODE}"
    trainer.save_freq="${SAVE_FREQ}"
    trainer.test_freq="${TEST_FREQ}"
    trainer.total_epochs="${TOTAL_EPOCHS}"
)

python3 -m verl.trainer.main_ppo \
    --config-name=ppo_megatron_trainer \
    "${DATA[@]}" \
    "${MODEL[@]}" \
    "${ACTOR[@]}" \
    "${ROLLOUT[@]}" \
    "${REF[@]}" \
    "${ALGORITHM[@]}" \
    "${REWARD[@]}" \
    "${TRAINER[@]}" \
    "$@"
