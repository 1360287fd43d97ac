assert self.actor_rollout_ref.actor.ppo_mini_batch_size % self.data.train_batch_size == 0, 'x'
