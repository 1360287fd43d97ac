#!/usr/bin/env bash
# GRPO training of Qwen3-235B-A22B-Instruct-2507 (MoE) with a 256k context
# (1k prompt + 255k response) on GSM8K, using verl's Megatron engine on
# Ascend NPU and vLLM-Ascend for rollout.
#
# verl version
#   Written for verl 0.9.1's config tree (the release tools/validate_scripts.py
#   checks against). Reference: verl's own copy of this script at commit
#   0664ab2d4 (PR #6429 merged), verl main.
#
# Hardware
#   16 Atlas A3 nodes x 16 NPU dies (8 cards x 2 dies, 64 GB each) = 256 dies.
#   Start a Ray cluster over the 16 nodes first and run this on the head node.
#
# Requirements
#   * a CANN base image with torch and the matching torch_npu
#   * Megatron-LM with MindSpeed, Megatron-Bridge, vLLM-Ascend
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
# Pipeline stages
#   The model has 94 layers and PP is 16; Megatron-Core asserts
#   num_layers % pipeline_model_parallel_size == 0 unless the first and last
#   stages are sized explicitly. 5 layers on the first and on the last stage
#   leave 84 = 14 x 6 for the 14 stages between. The ref sets its own
#   override_transformer_config keys, which replaces the dict it would
#   otherwise inherit from the actor, so it repeats the two stage sizes.
#
# Tokens per rank
#   Dynamic batch size is off, as in verl's script: one 256k sequence per
#   micro-batch, cut over CP=8 ranks, i.e. 32768 tokens per rank.
#   MAX_TOKEN_LEN_PER_GPU is that per-rank budget (verl multiplies it by CP
#   when dynamic batch size is on); it only matters if you turn that on.
#
# Parallelism (as in verl's script)
#   actor / ref: TP=2 PP=16 (first and last stage 5 layers) CP=8 EP=16 ETP=1
#   rollout:     TP=4, data parallel 32, expert parallel 128 (= TP x DP)
#
# Differences from verl's script (0664ab2d4), each on purpose
#   * no override_transformer_config swiglu / use_distributed_optimizer: they
#     are Megatron-LM command-line flags, not TransformerConfig fields, so
#     nothing reads them there (the distributed optimizer is
#     megatron.use_distributed_optimizer, True by default).
#   * no megatron.grad_offload: verl 0.9.1 has no such key.
#   * the ref also sets num_layers_in_first/last_pipeline_stage=5 (see above).
#   * every ref override_transformer_config key uses '++' (verl: '+' after
#     the first): only the first ref key meets the dict inherited from the
#     actor, where '+' fails on keys the actor set; '++' works in any order.
#   * ppo_max_token_len_per_gpu / log_prob_max_token_len_per_gpu are 32768
#     (per rank, see above) instead of 262144; unused with dynamic batch off.
#   * strict mode (set -euo pipefail) is on; verl has it commented out (a
#     refused `ulimit -n 32768` still only warns).
#   * no --config-path=config (main_ppo's own config directory already) and
#     --config-name without the .yaml suffix: the same file.
#   * output is not piped through `tee logs/...`: redirect it yourself.
#   * knob names follow this project (MODEL_PATH, ROLLOUT_TP, ...); model and
#     data default to ~/models and ~/data/gsm8k instead of ${WORK_DIR}.
#
# Usage
#   bash examples/ascend_extras/grpo_trainer/run_qwen3_235b_256k_megatron.sh [HYDRA_OVERRIDE ...]
#   Extra arguments go to verl last and win over the values set here.

set -euo pipefail

# Many open files at 256k context; a hard limit below this only warns, as
# in verl's script, which runs without set -e.
ulimit -n 32768 || echo "warning: could not raise the open-file limit to 32768" >&2

# ---------------------------------------------------------------------------
# User-adjustable settings
# ---------------------------------------------------------------------------
PROJECT_NAME=${PROJECT_NAME:-GRPO-Qwen3-235B-A22B-Instruct-MATH}
EXPERIMENT_NAME=${EXPERIMENT_NAME:-GRPO-Qwen3-235B-A22B-Instruct-Megatron-vLLM}

NNODES=${NNODES:-16}
NDEVICES_PER_NODE=${NDEVICES_PER_NODE:-16}

MODEL_PATH=${MODEL_PATH:-${HOME}/models/Qwen3-235B-A22B-Instruct-2507}
MCORE_MODEL_PATH=${MCORE_MODEL_PATH:-${HOME}/models/Qwen3-235B-A22B-Instruct-2507-Mcore}
RAY_DATA_HOME=${RAY_DATA_HOME:-${HOME}/verl}
CKPTS_DIR=${CKPTS_DIR:-${RAY_DATA_HOME}/ckpts/${PROJECT_NAME}/${EXPERIMENT_NAME}}

DATA_DIR=${DATA_DIR:-${HOME}/data/gsm8k}
TRAIN_FILE=${TRAIN_FILE:-${DATA_DIR}/train.parquet}
TEST_FILE=${TEST_FILE:-${DATA_DIR}/test.parquet}

MAX_PROMPT_LENGTH=$((1024 * 1))
MAX_RESPONSE_LENGTH=$((1024 * 255))

KL_LOSS_COEF=0.001

TRAIN_BATCH_SIZE=4
ROLLOUT_N=4
PPO_MINI_BATCH_SIZE=4

OFFLOAD=${OFFLOAD:-True}
USE_DYNAMIC_BSZ=False
MAX_TOKEN_LEN_PER_GPU=${MAX_TOKEN_LEN_PER_GPU:-32768}
OPTIMIZER_OFFLOAD_FRACTION=1

TP=${TP:-2}
EP=${EP:-16}
ETP=${ETP:-1}
PP=${PP:-16}
CP=${CP:-8}
# Layers on the first and last pipeline stage (94 = 5 + 14 x 6 + 5 at PP=16).
FIRST_STAGE_LAYERS=${FIRST_STAGE_LAYERS:-5}
LAST_STAGE_LAYERS=${LAST_STAGE_LAYERS:-5}

ROLLOUT_TP=${ROLLOUT_TP:-4}
ROLLOUT_DP=${ROLLOUT_DP:-32}
ROLLOUT_EP=${ROLLOUT_EP:-128}
GPU_MEMORY_UTILIZATION=${GPU_MEMORY_UTILIZATION:-0.7}
MAX_MODEL_LEN=$((MAX_PROMPT_LENGTH + MAX_RESPONSE_LENGTH))
MAX_NUM_BATCHED_TOKENS=2048

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
    algorithm.kl_ctrl.kl_coef=0.0
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
    actor_rollout_ref.actor.kl_loss_type=low_var_kl
    actor_rollout_ref.actor.optim.clip_grad=1.0
    actor_rollout_ref.actor.optim.lr_warmup_steps=10
    actor_rollout_ref.actor.optim.weight_decay=0.1
    actor_rollout_ref.actor.optim.lr=1e-6
    # Megatron's CPU optimizer: master weights and Adam states live on the host.
    +actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_offload_fraction="${OPTIMIZER_OFFLOAD_FRACTION}"
    +actor_rollout_ref.actor.optim.override_optimizer_config.use_precision_aware_optimizer=True
    +actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_cpu_offload=True
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.actor.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.actor.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.actor.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.actor.megatron.param_offload="${OFFLOAD}"
    actor_rollout_ref.actor.megatron.optimizer_offload="${OFFLOAD}"
    actor_rollout_ref.actor.megatron.use_dist_checkpointing=True
    actor_rollout_ref.actor.megatron.use_mbridge=True
    actor_rollout_ref.actor.megatron.dist_checkpointing_path="${MCORE_MODEL_PATH}"
    +actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True
    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform
    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full
    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_num_layers=1
    +actor_rollout_ref.actor.megatron.override_transformer_config.context_parallel_size="${CP}"
    +actor_rollout_ref.actor.megatron.override_transformer_config.num_layers_in_first_pipeline_stage="${FIRST_STAGE_LAYERS}"
    +actor_rollout_ref.actor.megatron.override_transformer_config.num_layers_in_last_pipeline_stage="${LAST_STAGE_LAYERS}"
    +actor_rollout_ref.actor.megatron.override_transformer_config.normalization=RMSNorm
    +actor_rollout_ref.actor.megatron.override_transformer_config.use_fused_rmsnorm=True
    +actor_rollout_ref.actor.megatron.override_transformer_config.use_fused_swiglu=True
    +actor_rollout_ref.actor.megatron.override_transformer_config.sequence_parallel=True
)

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
    actor_rollout_ref.ref.megatron.use_mbridge=True
    actor_rollout_ref.ref.megatron.use_dist_checkpointing=True
    actor_rollout_ref.ref.megatron.dist_checkpointing_path="${MCORE_MODEL_PATH}"
    # The ref's own keys replace the dict it would inherit (as upstream): it runs forward only, so the
    # actor's recompute keys do not matter there, and CP comes from ref.megatron.context_parallel_size.
    # validate-scripts: disable=ref-transformer-config
    ++actor_rollout_ref.ref.megatron.override_transformer_config.use_flash_attn=True
    ++actor_rollout_ref.ref.megatron.override_transformer_config.sequence_parallel=True
    ++actor_rollout_ref.ref.megatron.override_transformer_config.num_layers_in_first_pipeline_stage="${FIRST_STAGE_LAYERS}"
    ++actor_rollout_ref.ref.megatron.override_transformer_config.num_layers_in_last_pipeline_stage="${LAST_STAGE_LAYERS}"
)

ROLLOUT=(
    actor_rollout_ref.rollout.name=vllm
    actor_rollout_ref.rollout.n="${ROLLOUT_N}"
    actor_rollout_ref.rollout.max_num_seqs=16
    actor_rollout_ref.rollout.top_p=1.0
    actor_rollout_ref.rollout.top_k=-1
    actor_rollout_ref.rollout.temperature=1.0
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_use_dynamic_bsz="${USE_DYNAMIC_BSZ}"
    actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu="${MAX_TOKEN_LEN_PER_GPU}"
    actor_rollout_ref.rollout.gpu_memory_utilization="${GPU_MEMORY_UTILIZATION}"
    actor_rollout_ref.rollout.max_num_batched_tokens="${MAX_NUM_BATCHED_TOKENS}"
    actor_rollout_ref.rollout.max_model_len="${MAX_MODEL_LEN}"
    actor_rollout_ref.rollout.tensor_model_parallel_size="${ROLLOUT_TP}"
    actor_rollout_ref.rollout.data_parallel_size="${ROLLOUT_DP}"
    actor_rollout_ref.rollout.expert_parallel_size="${ROLLOUT_EP}"
    actor_rollout_ref.rollout.enable_chunked_prefill=True
    actor_rollout_ref.rollout.enable_prefix_caching=True
    actor_rollout_ref.rollout.enforce_eager=True
    actor_rollout_ref.rollout.free_cache_engine=True
)

TRAINER=(
    trainer.logger='["console","tensorboard"]'
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
