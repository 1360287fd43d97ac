#!/bin/bash
# case on DEVICE whose default is a command substitution (unknown statically): glob arm np*), alternatives gpu|cuda), *) default.
# profiles: DEVICE=gpu,npu,cpu   (DEVICE unset -> the probe runs; the stub python3 fails, so real bash picks gpu)
DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}

case $DEVICE in
    np*)
        TP=4
        DEVICE_ARGS="trainer.device=npu actor_rollout_ref.actor.use_torch_compile=False"
        ;;
    gpu|cuda)
        TP=2
        DEVICE_ARGS="trainer.device=cuda"
        ;;
    *)
        TP=1
        DEVICE_ARGS=""
        ;;
esac

case "$TP" in
    [4-8]) GPU_MEM=0.6 ;;
    2|3)   GPU_MEM=0.5 ;;
    *)     GPU_MEM=0.4 ;;
esac

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=64 \
    actor_rollout_ref.actor.ppo_mini_batch_size=32 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.tensor_model_parallel_size=$TP \
    actor_rollout_ref.rollout.gpu_memory_utilization=$GPU_MEM \
    $DEVICE_ARGS \
    trainer.experiment_name=grpo_${DEVICE} \
    "$@"
