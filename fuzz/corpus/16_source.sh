#!/bin/bash
# `source ./lib_x.sh` and `. ./lib_x.sh` of relative helper files; a sourced file sources another; sourced functions/arrays used in the launch.
# profiles: DEVICE=gpu,npu
DEVICE=${DEVICE:-gpu}

source ./lib_common.sh           # also sources ./lib_paths.sh
. ./lib_device.sh

add_arg actor_rollout_ref.rollout.n=5 "trainer.experiment_name=sourced ${DEVICE}"

python3 -m verl.trainer.main_ppo \
    "${COMMON_ARGS[@]}" \
    "${DEVICE_ARGS[@]}" \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct \
    trainer.project_name=${VAL_FILE##*/} \
    "$@"
