#!/usr/bin/env bash
# GRPO training of Qwen3.5-397B-A17B (MoE) on the geo3k geometry dataset,
# using verl's Megatron engine (model_engine=megatron) and vLLM for rollout.
#
# verl version
#   Written for verl 0.9.1's config tree (the release tools/validate_scripts.py
#   checks against). Reference: verl's own copy of this script at commit
#   1dda039b9 (PR #7335 merged), verl main; its default Ascend path was run
#   with verl 0.8.0.
#
# Hardware
#   GPU: 16 nodes x 8 GPUs of 80 GB (NNODES, NDEVICES_PER_NODE).
#   NPU: 16 Atlas A3 nodes x 16 NPU dies (8 cards x 2 dies, 64 GB each).
#
# Requirements on GPU
#   * Megatron-LM 0.16.0 (megatron-core)
#   * mbridge (legacy bridge: the gpu arm sets vanilla_mbridge=True)
#   * flash-linear-attention (Gated Delta Net kernels)
#   * a recent transformers release and a vLLM build that know Qwen3.5
#
# Requirements on Ascend (default backend, USE_MINDSPEED_BRIDGE=False)
#   * Megatron-LM 0.16.0
#   * MindSpeed 0.16.0
#   * Megatron-Bridge de93536e
#   * base image with CANN 9.0.0, torch 2.9.0, Python 3.11, plus viztracer,
#     flash-linear-attention, nvidia-modelopt, nvidia-ml-py,
#     nvidia-resiliency-ext and megatron-energon from pip
#
# Requirements on Ascend with MindSpeed-Bridge (USE_MINDSPEED_BRIDGE=True)
#   - Megatron-LM core_v0.18.0
#   - Megatron-Bridge v0.5.0
#   - MindSpeed core_r0.18.0
#   - MegatronAdaptor core_r0.18.0
#   - TransformerEngineNPU e40ec34036eb7e04ad11b983f8c6b0dc9fcd88f9  # main
#   - MindSpeed-Ops dbee3f41b156bb051fc046facf69548400be2be1  # master
#   - MindSpeed-Bridge d82eec3ce2b31deb82cc5474b6813498efded908  # master
#   - flash-linear-attention-npu v26.1.0
#   with torch 2.9.0, torch_npu 2.9.0.post9, vLLM 0.19.1 and vllm-ascend
#   0.19.1rc1 on Python 3.12 (Megatron-LM core_v0.18.0 and Megatron-Bridge
#   v0.5.0 do not install on 3.11). MegatronAdaptor is required by the repatch
#   logic of MindSpeed-Bridge. Pinned in requirements-ascend*.txt at the root;
#   install in order with examples/ascend_extras/install_mindspeed_bridge.sh.
#
# Padded batches (BSHD)
#   Qwen3.5 mixes Gated Delta Net (GDN) linear attention into its layers.
#   Megatron-LM 0.16's GDN has no packed-sequence (THD) path, so remove-padding
#   is off for the model and the Megatron engine and dynamic batch size is off,
#   on both devices, as in verl's script. On Ascend, use_naive_l2norm=True
#   selects MindSpeed's GDN (default path); USE_MINDSPEED_BRIDGE=True selects
#   the Ascend GDN kernels (use_ascend_gdn=True, use_triton_gdn=False) instead.
#   Before USE_MINDSPEED_BRIDGE existed, the npu arm set those two flags
#   unconditionally; Ascend users who want them must now set it.
#
# Rollout layout
#   The bf16 weights are about 794 GB: a vLLM replica that is tensor-parallel
#   only (TP 8) would need about 99 GB per GPU. The rollout therefore runs 16
#   data-parallel replicas with expert parallelism over all of them
#   (rollout EP = rollout TP x rollout DP: 128 on GPU, 256 on NPU), so the
#   routed experts are spread over every device.
#
# Parallelism
#   Tested by verl (its header): NPU, 16 nodes x 16, TP=2 PP=4 CP=1 EP=64
#     ETP=1, rollout TP=16 DP=16 EP=256.
#   GPU: verl's defaults for the gpu arm, no run reported: 16 nodes x 8,
#     TP=2 PP=2 CP=1 EP=64 ETP=1, rollout TP=8 DP=16 EP=128.
#
# Differences from verl's script (1dda039b9), each on purpose
#   * no megatron.grad_offload: verl 0.9.1 has no such key (Hydra would
#     refuse it); param_offload and optimizer_offload stay.
#   * use_naive_l2norm=True only when USE_MINDSPEED_BRIDGE=False: it selects
#     MindSpeed's GDN on core_r0.16.0; core_r0.18.0 (the bridge stack) does
#     not register the argument.
#   * actor and ref both spell out megatron.use_mbridge=True (verl asserts it).
#   * the npu arm sets trainer.device=npu instead of relying on detection.
#   * vanilla_mbridge is set once per DEVICE arm instead of set in common and
#     overridden in the npu arm.
#   * no `unset http_proxy https_proxy`: the caller's proxy is kept.
#   * output is not piped through `tee logs/...`: redirect it yourself.
#   * knob names follow this project (MODEL_PATH, ROLLOUT_TP, ROLLOUT_DP,
#     ROLLOUT_EP, SAVE_PATH, ...; verl's: HF_MODEL_PATH, GEN_TP, GEN_DP,
#     GEN_EP, save_path, ...); MODEL_PATH defaults to ~/models/<name>.
#
# Usage
#   bash examples/grpo_trainer/run_qwen3_5_397b_megatron.sh [HYDRA_OVERRIDE ...]
#   Every knob below reads the environment first; any extra argument is passed
#   to verl last, so it wins over the values set here.

export CUDA_DEVICE_MAX_CONNECTIONS=1
export VLLM_USE_V1=1
export VLLM_ALLREDUCE_USE_SYMM_MEM=0
set -xeuo pipefail

# ---------------------------------------------------------------------------
# User-adjustable settings
# ---------------------------------------------------------------------------
DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}

case "${DEVICE}" in
    gpu)
        export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
        ;;
    npu)
        export CPU_AFFINITY_CONF=${CPU_AFFINITY_CONF:-1}
        export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
        export PYTORCH_NPU_ALLOC_CONF=${PYTORCH_NPU_ALLOC_CONF:-garbage_collection_threshold:0.8}
        export USE_OPTIMIZED_MODEL=${USE_OPTIMIZED_MODEL:-0}
        export HCCL_CONNECT_TIMEOUT=${HCCL_CONNECT_TIMEOUT:-5400}
        export HCCL_BUFFSIZE=${HCCL_BUFFSIZE:-300}
        export TASK_QUEUE_ENABLE=${TASK_QUEUE_ENABLE:-1}
        export COMBINED_ENABLE=${COMBINED_ENABLE:-1}
        export TOKENIZERS_PARALLELISM=${TOKENIZERS_PARALLELISM:-false}
        export RAY_DEDUP_LOGS=${RAY_DEDUP_LOGS:-0}
        export VLLM_ASCEND_ENABLE_NZ=${VLLM_ASCEND_ENABLE_NZ:-0}
        ;;
    *)
        echo "DEVICE must be 'gpu' or 'npu', got '${DEVICE}'" >&2
        exit 1
        ;;
esac

NNODES=${NNODES:-16}
SAVE_PATH=${SAVE_PATH:-Qwen/Qwen3.5-397B/verl_checkpoint}
SAVE_FREQ=50

case "${DEVICE}" in
    gpu)
        TP=${TP:-2}
        PP=${PP:-2}
        CP=${CP:-1}
        EP=${EP:-64}
        ETP=${ETP:-1}
        ROLLOUT_DP=${ROLLOUT_DP:-16}
        ROLLOUT_TP=${ROLLOUT_TP:-8}
        ROLLOUT_EP=${ROLLOUT_EP:-128}
        NDEVICES_PER_NODE=${NDEVICES_PER_NODE:-8}
        ;;
    npu)
        TP=${TP:-2}
        PP=${PP:-4}
        CP=${CP:-1}
        EP=${EP:-64}
        ETP=${ETP:-1}
        ROLLOUT_DP=${ROLLOUT_DP:-16}
        ROLLOUT_TP=${ROLLOUT_TP:-16}
        ROLLOUT_EP=${ROLLOUT_EP:-256}
        NDEVICES_PER_NODE=${NDEVICES_PER_NODE:-16}
        ;;
esac

OFFLOAD=${OFFLOAD:-True}
# True selects MindSpeed-Bridge's Ascend GDN kernels (npu only).
USE_MINDSPEED_BRIDGE=${USE_MINDSPEED_BRIDGE:-False}

ROLLOUT_ENGINE=vllm
PROJECT_NAME=${PROJECT_NAME:-verl_grpo_qwen3_5_397b_geo3k}
EXPERIMENT_NAME=${EXPERIMENT_NAME:-qwen3_5_397b_megatron}
ADV_ESTIMATOR=grpo

MODEL_PATH=${MODEL_PATH:-${HOME}/models/Qwen3.5-397B-A17B}
DATA_DIR=${DATA_DIR:-${HOME}/data/geo3k}
TRAIN_FILE=${TRAIN_FILE:-${DATA_DIR}/train.parquet}
TEST_FILE=${TEST_FILE:-${DATA_DIR}/test.parquet}

# ---------------------------------------------------------------------------
# Hydra overrides, grouped by concern
# ---------------------------------------------------------------------------
DATA=(
    data.train_files="${TRAIN_FILE}"
    data.val_files="${TEST_FILE}"
    data.train_batch_size=64
    data.max_prompt_length=1024
    data.max_response_length=2048
    data.truncation=error
    data.filter_overlong_prompts=True
)

MODEL=(
    actor_rollout_ref.model.path="${MODEL_PATH}"
    actor_rollout_ref.model.trust_remote_code=True
    actor_rollout_ref.model.use_remove_padding=False
)

ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=4096
    actor_rollout_ref.actor.use_dynamic_bsz=False
    actor_rollout_ref.actor.use_kl_loss=True
    actor_rollout_ref.actor.kl_loss_coef=0.01
    actor_rollout_ref.actor.kl_loss_type=low_var_kl
    actor_rollout_ref.actor.entropy_coeff=0
    actor_rollout_ref.actor.megatron.use_mbridge=True
    actor_rollout_ref.actor.megatron.use_remove_padding=False
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.actor.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.actor.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.actor.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.actor.megatron.param_offload="${OFFLOAD}"
    actor_rollout_ref.actor.megatron.optimizer_offload="${OFFLOAD}"
    actor_rollout_ref.actor.megatron.dtype=bfloat16
    ++actor_rollout_ref.actor.megatron.override_transformer_config.attention_backend=auto
    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform
    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full
    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_num_layers=1
    +actor_rollout_ref.actor.megatron.override_transformer_config.moe_aux_loss_coeff=0.01
    +actor_rollout_ref.actor.megatron.override_transformer_config.moe_z_loss_coeff=0.001
    +actor_rollout_ref.actor.megatron.override_transformer_config.moe_permute_fusion=True
    +actor_rollout_ref.actor.megatron.override_transformer_config.moe_grouped_gemm=True
    # Megatron's CPU optimizer: master weights and Adam states live on the host.
    +actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_offload_fraction=1
    +actor_rollout_ref.actor.optim.override_optimizer_config.overlap_cpu_optimizer_d2h_h2d=True
    +actor_rollout_ref.actor.optim.override_optimizer_config.use_precision_aware_optimizer=True
    +actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_cpu_offload=True
)

ROLLOUT=(
    actor_rollout_ref.rollout.name="${ROLLOUT_ENGINE}"
    actor_rollout_ref.rollout.tensor_model_parallel_size="${ROLLOUT_TP}"
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6
    actor_rollout_ref.rollout.n=5
    actor_rollout_ref.rollout.dtype=bfloat16
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=False
    actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=4096
    actor_rollout_ref.rollout.calculate_log_probs=True
    # Expert-parallel replicas: verl requires EP = rollout TP x rollout DP.
    actor_rollout_ref.rollout.data_parallel_size="${ROLLOUT_DP}"
    actor_rollout_ref.rollout.expert_parallel_size="${ROLLOUT_EP}"
    actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=1024
    +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode="FULL_DECODE_ONLY"
    +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_capture_sizes="[4,12,24,48,64]"
)

REF=(
    actor_rollout_ref.ref.megatron.use_mbridge=True
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.ref.log_prob_use_dynamic_bsz=False
    actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=4096
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.ref.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.ref.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.ref.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.ref.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.ref.megatron.param_offload="${OFFLOAD}"
)

ALGORITHM=(
    algorithm.adv_estimator="${ADV_ESTIMATOR}"
    algorithm.use_kl_in_reward=False
)

TRAINER=(
    trainer.critic_warmup=0
    trainer.logger='["console"]'
    trainer.project_name="${PROJECT_NAME}"
    trainer.experiment_name="${EXPERIMENT_NAME}"
    trainer.n_gpus_per_node="${NDEVICES_PER_NODE}"
    trainer.nnodes="${NNODES}"
    trainer.save_freq="${SAVE_FREQ}"
    trainer.default_local_dir="${SAVE_PATH}"
    trainer.val_before_train=True
    trainer.test_freq=5
    trainer.total_epochs=15
)

ENGINE=(
    model_engine=megatron
)

# ---------------------------------------------------------------------------
# Device-specific additions
# ---------------------------------------------------------------------------
case "${DEVICE}" in
    gpu)
        ACTOR+=(
            actor_rollout_ref.actor.megatron.vanilla_mbridge=True
        )
        ;;
    npu)
        TRAINER+=(
            trainer.device=npu
        )
        ACTOR+=(
            actor_rollout_ref.actor.megatron.vanilla_mbridge=False
            actor_rollout_ref.actor.checkpoint.strict=False
            +actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True
            +actor_rollout_ref.actor.megatron.override_transformer_config.moe_token_dispatcher_type=alltoall
        )
        if [ "${USE_MINDSPEED_BRIDGE}" = "True" ]; then
            # MindSpeed-Bridge: Ascend GDN kernels instead of the Triton ones.
            ACTOR+=(
                +actor_rollout_ref.actor.megatron.override_transformer_config.use_triton_gdn=False
                +actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True
            )
        else
            # MindSpeed core_r0.16.0: select its GDN implementation.
            ACTOR+=(
                +actor_rollout_ref.actor.megatron.override_transformer_config.use_naive_l2norm=True
            )
        fi
        ROLLOUT+=(
            +actor_rollout_ref.rollout.engine_kwargs.vllm.mm_processor_cache_gb=0
        )
        ;;
esac

python3 -m verl.trainer.main_ppo \
    "${DATA[@]}" \
    "${ALGORITHM[@]}" \
    "${MODEL[@]}" \
    "${ROLLOUT[@]}" \
    "${ACTOR[@]}" \
    "${REF[@]}" \
    "${TRAINER[@]}" \
    "${ENGINE[@]}" \
    "$@"
