#!/bin/bash
# Parameter expansion defaults: ${V} $V ${V:-d} ${V-d} (unset vs empty) ${V:=d} ${V=d} ${V:?msg} ${V:+x}.
# profiles: none
NAME=gsm8k
EMPTY=""
unset NOT_SET

A=${NOT_SET:-unsetcolon}      # unset  -> default
B=${NOT_SET-unsetnocolon}     # unset  -> default
C=${EMPTY:-emptycolon}        # empty  -> default (colon form tests "unset or empty")
D=${EMPTY-emptynocolon}       # empty  -> stays empty (no-colon form tests "unset" only)

: ${LR:=1e-6}                 # unset -> assigns LR
EMPTY_N=""
: "${EMPTY_N:=4}"             # empty -> assigns 4
EMPTY_E=""
: "${EMPTY_E=9}"              # empty but set -> no assignment, stays empty

E=${NAME:?NAME must be set}   # set -> expands to its value
F=${NAME:+with_$NAME}         # set and non-empty -> alternate value
G=${EMPTY:+never}             # empty -> nothing
H=${NOT_SET:+never}           # unset -> nothing

python3 -m verl.trainer.main_ppo \
    data.train_files=$HOME/data/${NAME}/train.parquet \
    data.val_files=${HOME}/data/$NAME/test.parquet \
    data.max_prompt_length=${MAXP:-512} \
    data.max_response_length=${EMPTY:-256} \
    actor_rollout_ref.actor.optim.lr=$LR \
    actor_rollout_ref.actor.ppo_mini_batch_size=128 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    actor_rollout_ref.rollout.n=${EMPTY_N} \
    trainer.total_epochs=${EMPTY_E:-1}${EMPTY_E-7} \
    trainer.project_name=${A}_${B} \
    trainer.experiment_name=${C}_${D}x_${E}_${F}${G}${H}_end \
    "$@"
