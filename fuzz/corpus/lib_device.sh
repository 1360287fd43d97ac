# shellcheck shell=bash
# Sourced helper (not a fixture): device-specific settings selected by DEVICE.
case $DEVICE in
    npu)
        DEVICE_ARGS=(trainer.device=npu actor_rollout_ref.rollout.tensor_model_parallel_size=4)
        ;;
    *)
        DEVICE_ARGS=(trainer.device=cuda actor_rollout_ref.rollout.tensor_model_parallel_size=2)
        ;;
esac
