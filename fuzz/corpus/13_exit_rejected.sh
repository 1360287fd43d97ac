#!/bin/bash
# exit N: some profiles are rejected before the launch (`*)` arm exits 1; a combined check exits 2).
# profiles: DEVICE=gpu,npu,cpu MODE=small,large
# rejected: DEVICE=cpu (exit 1, any MODE); DEVICE=npu MODE=large (exit 2)
DEVICE=${DEVICE:-gpu}
MODE=${MODE:-small}

case $DEVICE in
    gpu)
        DEVICE_ARGS="trainer.device=cuda"
        ;;
    npu)
        DEVICE_ARGS="trainer.device=npu"
        ;;
    *)
        echo "unsupported DEVICE=$DEVICE" >&2
        exit 1
        ;;
esac

if [ "$DEVICE" = npu ] && [ "$MODE" = large ]; then
    echo "MODE=large is not supported on npu" >&2
    exit 2
fi

case $MODE in
    small) MODEL=Qwen/Qwen2.5-0.5B-Instruct; NODES=1 ;;
    large) MODEL=Qwen/Qwen2.5-32B-Instruct; NODES=4 ;;
    *) echo "unknown MODE=$MODE" >&2; exit 1 ;;
esac

python3 -m verl.trainer.main_ppo \
    actor_rollout_ref.model.path=$MODEL \
    actor_rollout_ref.actor.ppo_mini_batch_size=128 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    trainer.nnodes=$NODES \
    $DEVICE_ARGS \
    trainer.experiment_name=${DEVICE}_${MODE} \
    "$@"
