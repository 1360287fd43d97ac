#!/bin/bash
# Assignments: plain, reassignment, export, `export A=1 B`, readonly, declare, declare -r, declare -a, local/declare inside a function.
# profiles: none
MODEL=Qwen/Qwen2.5-0.5B-Instruct
BATCH=64
export PROJECT=verl_fixtures
readonly EPOCHS=2
declare MAX_PROMPT=512
declare -r MAX_RESPONSE=256
declare -a FILES=("$HOME/data/gsm8k/train.parquet" "$HOME/data/gsm8k/test.parquet")
NNODES=1
export GPUS=8 NODES          # GPUS gets a value; NODES is only marked for export
NODES=$NNODES
BATCH=128                    # the last assignment wins

LR=3e-6                      # global LR, shadowed inside set_lr
set_lr() {
    local LR=5e-7
    LR=1e-6                  # modifies the local, not the global
    declare SCRATCH=42       # declare inside a function is local too
    ACTOR_LR=$LR             # no `local`: this one is global
}
set_lr

python3 -m verl.trainer.main_ppo \
    data.train_files="${FILES[0]}" \
    data.val_files="${FILES[1]}" \
    data.train_batch_size=$BATCH \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    data.max_prompt_length=$MAX_PROMPT \
    data.max_response_length=$MAX_RESPONSE \
    actor_rollout_ref.model.path=$MODEL \
    actor_rollout_ref.actor.optim.lr=$ACTOR_LR \
    critic.optim.lr=$LR \
    actor_rollout_ref.rollout.n=${SCRATCH:-5} \
    trainer.project_name=$PROJECT \
    trainer.total_epochs=$EPOCHS \
    trainer.n_gpus_per_node=$GPUS \
    trainer.nnodes=$NODES \
    "$@"
