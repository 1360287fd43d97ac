#!/usr/bin/env bash
# profiles-capped: three two-way switches make 8 profiles, more than --max-profiles 4.
# expect-line-1: profiles-capped
set -euo pipefail

DEVICE=${DEVICE:-gpu}
ENGINE=${ENGINE:-fsdp}
ROLLOUT=${ROLLOUT:-vllm}
MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}

ARGS=(data.train_batch_size=256 actor_rollout_ref.model.path="$MODEL_PATH")
case "$DEVICE" in
    gpu) ARGS+=(trainer.n_gpus_per_node=8) ;;
    npu) ARGS+=(trainer.n_gpus_per_node=16 trainer.device=npu) ;;
esac
if [ "$ENGINE" = megatron ]; then
    ARGS+=(model_engine=megatron actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2)
else
    ARGS+=(actor_rollout_ref.actor.fsdp_config.param_offload=True)
fi
if [ "$ROLLOUT" = sglang ]; then
    ARGS+=(actor_rollout_ref.rollout.name=sglang)
else
    ARGS+=(actor_rollout_ref.rollout.name=vllm)
fi

python3 -m verl.trainer.main_ppo "${ARGS[@]}" trainer.total_epochs=10
