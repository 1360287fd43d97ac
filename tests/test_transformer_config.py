"""TransformerConfig fields come from megatron-core's source, read with ast (installed, or shipped data)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT

from verl_preflight.sources import transformer_config_fields as megatron_fields


def test_fields_are_read_from_megatron_core_without_torch():
    fields = megatron_fields()
    assert fields is not None
    # TransformerConfig's own fields and its ModelParallelConfig base
    assert {
        "recompute_granularity",
        "recompute_method",
        "moe_router_dtype",
        "num_layers",
        "tensor_model_parallel_size",
    } <= fields
    assert "use_ascend_gdn" not in fields


def test_reading_fields_imports_neither_torch_nor_megatron():
    code = (
        f"import sys; sys.path.insert(0, {os.path.join(ROOT, 'src')!r});"
        "from verl_preflight.sources import transformer_config_fields as megatron_fields;"
        "assert megatron_fields();"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'megatron')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_without_megatron_core_installed_keys_are_still_checked(tmp_path):
    """The hook's environment has no megatron-core: the shipped key data still catches a typo."""
    script = tmp_path / "s.sh"
    script.write_text(
        "#!/usr/bin/env bash\n"
        "A=(+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularty=full)\n"
        'python3 -m verl.trainer.main_ppo model_engine=megatron "${A[@]}" '
        'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 data.train_batch_size=512 trainer.device=cuda "$@"\n'
    )
    code = (
        "import sys, importlib.util; real = importlib.util.find_spec;"
        "importlib.util.find_spec = lambda n, *a: None if n == 'megatron' else real(n, *a);"
        f"sys.path.insert(0, {os.path.join(ROOT, 'src')!r});"
        f"from verl_preflight.app.cli import main; sys.exit(main(['--no-cache', {str(script)!r}]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "recompute_granularty" in proc.stdout and "megatron-core 0.16.1 (default)" in proc.stdout
    assert "torch" not in proc.stderr
