#!/usr/bin/env bash
# gdn-flag-gate: the npu arm appends the MindSpeed-Bridge GDN flags without the
# USE_MINDSPEED_BRIDGE gate, so stock Megatron-LM on Ascend gets them too
# (the mistake verl PR #7335 fixed).
set -euo pipefail

DEVICE=${DEVICE:-gpu}
MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3.5-9B}

ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=64
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.actor.use_dynamic_bsz=False
    actor_rollout_ref.actor.megatron.use_mbridge=True
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=1
)
MODEL=(
    actor_rollout_ref.model.path="$MODEL_PATH"
)
TRAINER=(
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=10
)

case "${DEVICE}" in
    gpu)
        MODEL+=(actor_rollout_ref.model.use_remove_padding=False)
        ACTOR+=(actor_rollout_ref.actor.megatron.use_remove_padding=False)
        ;;
    npu)
        TRAINER+=(trainer.device=npu)
        ACTOR+=(
            +actor_rollout_ref.actor.megatron.override_transformer_config.use_triton_gdn=False  # expect: gdn-flag-gate
            +actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True  # expect: gdn-flag-gate
        )
        ;;
    *)
        echo "DEVICE must be gpu or npu" >&2
        exit 1
        ;;
esac

python3 -m verl.trainer.main_ppo \
    model_engine=megatron \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=256 \
    actor_rollout_ref.rollout.n=8 \
    "${MODEL[@]}" \
    "${ACTOR[@]}" \
    "${TRAINER[@]}" \
    "$@"
