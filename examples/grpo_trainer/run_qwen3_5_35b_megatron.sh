#!/usr/bin/env bash
# GRPO training of Qwen3.5-35B-A3B (MoE) on the geo3k geometry dataset,
# using verl's Megatron engine (model_engine=megatron) and vLLM for rollout.
#
# verl version
#   Written for verl 0.9.1's config tree (the release tools/validate_scripts.py
#   checks against). Reference: verl's own copy of this script at commit
#   1dda039b9 (PR #7335 merged), verl main.
#
# Hardware
#   GPU: one node with 8 GPUs of 80 GB (e.g. H100 / H200).
#   NPU: one Atlas A3 node, 8 cards x 2 dies = 16 NPU dies (64 GB each).
#
# Requirements on GPU
#   * Megatron-LM 0.16.0 (megatron-core)
#   * mbridge (legacy bridge: the gpu arm sets vanilla_mbridge=True)
#   * flash-linear-attention (Gated Delta Net kernels)
#   * a recent transformers release that knows the Qwen3.5 architecture
#   * a vLLM build with Qwen3.5 support
#
# Requirements on Ascend (default backend, USE_MINDSPEED_BRIDGE=False)
#   * Megatron-LM 0.16.0
#   * MindSpeed 0.16.0
#   * Megatron-Bridge de93536e
#   * base image with CANN 9.0.0, torch 2.9.0, Python 3.11
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
# Packed sequences (THD) and Gated Delta Net
#   Qwen3.5 mixes Gated Delta Net (GDN) linear attention into its layers.
#   Megatron-LM 0.16's GDN has no packed-sequence (THD) path, so the gpu arm
#   turns remove-padding off for the model and the Megatron engine and keeps
#   dynamic batch size off: batches stay padded (BSHD). The npu arm uses
#   MindSpeed's GDN (use_naive_l2norm=True on the default path, the Ascend
#   GDN kernels of MindSpeed-Bridge with USE_MINDSPEED_BRIDGE=True) and runs
#   THD with dynamic batch size, as verl's script does.
#   Before USE_MINDSPEED_BRIDGE existed, the npu arm set use_triton_gdn=False
#   and use_ascend_gdn=True unconditionally; Ascend users who want them must
#   now set USE_MINDSPEED_BRIDGE=True.
#
# Memory
#   The actor keeps Megatron's CPU optimizer on (override_optimizer_config:
#   optimizer_cpu_offload, optimizer_offload_fraction=1, precision-aware
#   optimizer, overlapped D2H/H2D). Without it the optimizer step on 8 GPUs
#   needs about 85 GB per GPU (bf16 weights + fp32 grads + fp32 master and
#   Adam states, experts not sharded over data parallel at EP=8): see
#   tests/test_reference_suite.py for the estimate.
#
# Parallelism
#   Tested by verl (its header): GPU, 1 node x 8, TP=2 PP=1 CP=1 EP=8 ETP=1,
#     rollout TP=8.
#   NPU: verl's defaults for the npu arm, no run reported: 1 node x 16,
#     TP=2 PP=2 CP=1 EP=8 ETP=1, rollout TP=8.
#
# Differences from verl's script (1dda039b9), each on purpose
#   * no megatron.grad_offload: verl 0.9.1 has no such key (Hydra would
#     refuse it); param_offload and optimizer_offload stay.
#   * use_naive_l2norm=True only when USE_MINDSPEED_BRIDGE=False: it selects
#     MindSpeed's GDN on core_r0.16.0; core_r0.18.0 (the bridge stack) does
#     not register the argument.
#   * actor and ref both spell out megatron.use_mbridge=True (verl asserts it).
#   * the npu arm sets trainer.device=npu instead of relying on detection.
#   * vanilla_mbridge, use_remove_padding and use_dynamic_bsz are set once per
#     DEVICE arm instead of set in common and overridden in the npu arm.
#   * python3 is started directly: no `uv run` wrapper (VERL_USE_UV), which
#     needs a verl checkout with its uv.lock as working directory; Ray's
#     py_executable stays at verl's default (null).
#   * knob names follow this project (MODEL_PATH, ROLLOUT_TP, ...; verl's:
#     HF_MODEL_PATH, GEN_TP, ...); MODEL_PATH defaults to ~/models/<name>.
#
# Usage
#   bash examples/grpo_trainer/run_qwen3_5_35b_megatron.sh [HYDRA_OVERRIDE ...]
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
        TP=${TP:-2}
        PP=${PP:-1}
        CP=${CP:-1}
        EP=${EP:-8}
        ETP=${ETP:-1}
        ROLLOUT_TP=${ROLLOUT_TP:-8}
        NDEVICES_PER_NODE=${NDEVICES_PER_NODE:-8}
        ;;
    npu)
        TP=${TP:-2}
        PP=${PP:-2}
        CP=${CP:-1}
        EP=${EP:-8}
        ETP=${ETP:-1}
        ROLLOUT_TP=${ROLLOUT_TP:-8}
        NDEVICES_PER_NODE=${NDEVICES_PER_NODE:-16}
        ;;
    *)
        echo "DEVICE must be 'gpu' or 'npu', got '${DEVICE}'" >&2
        exit 1
        ;;
esac

OFFLOAD=${OFFLOAD:-True}
# True selects MindSpeed-Bridge's Ascend GDN kernels (npu only).
USE_MINDSPEED_BRIDGE=${USE_MINDSPEED_BRIDGE:-False}

ROLLOUT_ENGINE=${ROLLOUT_ENGINE:-vllm}
PROJECT_NAME=${PROJECT_NAME:-verl_grpo_qwen3_5_35b_geo3k}
EXPERIMENT_NAME=${EXPERIMENT_NAME:-qwen3_5_35b_megatron}

MODEL_PATH=${MODEL_PATH:-${HOME}/models/Qwen3.5-35B-A3B}
DATA_DIR=${DATA_DIR:-${HOME}/data/geo3k}
TRAIN_FILE=${TRAIN_FILE:-${DATA_DIR}/train.parquet}
TEST_FILE=${TEST_FILE:-${DATA_DIR}/test.parquet}

# ---------------------------------------------------------------------------
# Hydra overrides, grouped by concern
# ---------------------------------------------------------------------------
ENGINE=(
    model_engine=megatron
)

DATA=(
    data.train_files="${TRAIN_FILE}"
    data.val_files="${TEST_FILE}"
    data.train_batch_size=32
    data.max_prompt_length=1024
    data.max_response_length=2048
    data.truncation=error
    data.filter_overlong_prompts=True
)

MODEL=(
    actor_rollout_ref.model.path="${MODEL_PATH}"
    actor_rollout_ref.model.trust_remote_code=True
)

ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=4096
    actor_rollout_ref.actor.use_kl_loss=True
    actor_rollout_ref.actor.kl_loss_coef=0.01
    actor_rollout_ref.actor.kl_loss_type=low_var_kl
    actor_rollout_ref.actor.entropy_coeff=0
    actor_rollout_ref.actor.megatron.use_mbridge=True
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
    actor_rollout_ref.rollout.n=5
    actor_rollout_ref.rollout.dtype=bfloat16
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=4096
    actor_rollout_ref.rollout.calculate_log_probs=True
)

REF=(
    actor_rollout_ref.ref.megatron.use_mbridge=True
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=4096
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.ref.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.ref.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.ref.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.ref.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.ref.megatron.param_offload="${OFFLOAD}"
)

ALGORITHM=(
    algorithm.adv_estimator=grpo
    algorithm.use_kl_in_reward=False
)

TRAINER=(
    trainer.critic_warmup=0
    trainer.logger='["console","wandb"]'
    trainer.project_name="${PROJECT_NAME}"
    trainer.experiment_name="${EXPERIMENT_NAME}"
    trainer.n_gpus_per_node="${NDEVICES_PER_NODE}"
    trainer.nnodes=1
    trainer.save_freq=20
    trainer.val_before_train=False
    trainer.test_freq=5
    trainer.total_epochs=15
)

# ---------------------------------------------------------------------------
# Device-specific additions
# ---------------------------------------------------------------------------
case "${DEVICE}" in
    gpu)
        # Megatron-LM 0.16's GDN has no THD path: padded (BSHD) batches.
        MODEL+=(
            actor_rollout_ref.model.use_remove_padding=False
        )
        ACTOR+=(
            actor_rollout_ref.actor.use_dynamic_bsz=False
            actor_rollout_ref.actor.megatron.vanilla_mbridge=True
            actor_rollout_ref.actor.megatron.use_remove_padding=False
        )
        ROLLOUT+=(
            actor_rollout_ref.rollout.gpu_memory_utilization=0.6
            actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=False
        )
        REF+=(
            actor_rollout_ref.ref.log_prob_use_dynamic_bsz=False
        )
        ;;
    npu)
        export CPU_AFFINITY_CONF=1
        TRAINER+=(
            trainer.device=npu
        )
        # MindSpeed's GDN takes packed sequences: THD with dynamic batch size.
        MODEL+=(
            actor_rollout_ref.model.use_remove_padding=True
        )
        ACTOR+=(
            actor_rollout_ref.actor.use_dynamic_bsz=True
            actor_rollout_ref.actor.megatron.vanilla_mbridge=False
            actor_rollout_ref.actor.checkpoint.strict=False
            actor_rollout_ref.actor.megatron.use_remove_padding=True
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
            actor_rollout_ref.rollout.gpu_memory_utilization=0.65
            actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=True
            +actor_rollout_ref.rollout.engine_kwargs.vllm.mm_processor_cache_gb=0
        )
        REF+=(
            actor_rollout_ref.ref.log_prob_use_dynamic_bsz=True
        )
        ;;
esac

python3 -m verl.trainer.main_ppo \
    "${ENGINE[@]}" \
    "${DATA[@]}" \
    "${ALGORITHM[@]}" \
    "${MODEL[@]}" \
    "${ROLLOUT[@]}" \
    "${ACTOR[@]}" \
    "${REF[@]}" \
    "${TRAINER[@]}" \
    "$@"
