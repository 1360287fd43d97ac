#!/bin/bash
# set -euo pipefail (plus set -x): nothing aborts because every "failing" command sits where errexit ignores it.
# profiles: DEVICE=gpu,npu
set -euo pipefail
set -x                                             # trace goes to stderr only

DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}
OPTIONAL=${OPTIONAL:-}                             # set -u: a default makes an unset var safe
EMPTY=()

N=1
[ "$DEVICE" = npu ] && N=4                         # a failing && list does not trigger set -e
if ! [ -n "$OPTIONAL" ]; then                     # a failing if condition is fine under set -e
    ATTN=eager
else
    ATTN=flash
fi
false || FALLBACK=yes
EPOCHS=0
EPOCHS=$((EPOCHS + 1))                             # (( EPOCHS++ )) from 0 would abort under set -e

python3 -m verl.trainer.main_ppo \
    data.train_batch_size=32 \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    actor_rollout_ref.rollout.n=$N \
    trainer.total_epochs=$EPOCHS \
    trainer.experiment_name=${DEVICE}_${ATTN}_${FALLBACK}${OPTIONAL} \
    "${EMPTY[@]}" "$@"
