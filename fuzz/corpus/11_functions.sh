#!/bin/bash
# Functions: defined then called, $1 $2 $#, local, appending to a global array, return status, `function` keyword, launch inside a function with "$@".
# profiles: none
OVERRIDES=()

add() { OVERRIDES+=("$1=$2"); }

set_if_given() {
    if [ $# -lt 2 ]; then
        return 1
    fi
    add "$1" "$2"
}

function pick_tp {
    local size=$1
    local tp
    case $size in
        7B) tp=2 ;;
        32B|72B) tp=8 ;;
        *) tp=1 ;;
    esac
    TP=$tp
    return 0
}

is_big() { [ "$1" -gt 8 ]; }
count() { NARGS=$#; }

run() {
    python3 -m verl.trainer.main_ppo "${OVERRIDES[@]}" "$@"
}

add data.train_batch_size 128
add actor_rollout_ref.actor.ppo_mini_batch_size 64
add actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu 2
set_if_given trainer.total_epochs || add trainer.total_epochs 1      # returns 1 -> fallback
set_if_given data.max_prompt_length 512
pick_tp 32B
if is_big 16; then add trainer.nnodes 2; fi
if is_big 4; then add trainer.n_gpus_per_node 4; fi
count a "b c" d

run actor_rollout_ref.rollout.tensor_model_parallel_size=$TP \
    actor_rollout_ref.rollout.n=$NARGS \
    trainer.experiment_name=tp${TP}_${size:-nolocal}_${tp:-nolocal}
