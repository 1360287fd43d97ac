"""Key sets read from the real sources of the stack, per version; never hand-written lists.

- Megatron-Core: the fields of TransformerConfig (with ModelParallelConfig's),
  per megatron-core version (sources/megatron.py).
- MindSpeed: the arguments its features register, per branch (sources/mindspeed.py).
- verl: the config dataclasses of a verl tree, their fields, dict-typed fields
  and the enumerations their `__post_init__` checks (sources/verl_classes.py).

Megatron-Core and MindSpeed answers come from JSON files shipped in
verl_preflight/data/stack/, written by tools/gen_stack_data.py (an installed
megatron-core of the version asked for is read directly). verl is read from
its source tree at run time. Nothing here imports megatron, MindSpeed, verl or torch.
"""

from .megatron import (
    installed_megatron_version,
    known_megatron_versions,
    transformer_config_fields,
    transformer_config_types,
)
from .mindspeed import known_mindspeed_branches, mindspeed_arg_info, mindspeed_args
from .verl_classes import EnumCheck, Registry, find_verl_root, verl_dataclasses

__all__ = [
    "EnumCheck",
    "Registry",
    "find_verl_root",
    "installed_megatron_version",
    "known_megatron_versions",
    "known_mindspeed_branches",
    "mindspeed_arg_info",
    "mindspeed_args",
    "transformer_config_fields",
    "transformer_config_types",
    "verl_dataclasses",
]
