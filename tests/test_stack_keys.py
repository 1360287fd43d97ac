"""Key sets read from the stack's real sources (verl_preflight.sources), per version.

Tests marked by `needs_stack` read the sources in ../shared/data/stack and skip
without them; the others use only the JSON shipped in the package, the
installed megatron-core / verl (found with find_spec, never imported) or small
trees written here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, SHARED

from verl_preflight.sources import (
    find_verl_root,
    installed_megatron_version,
    known_megatron_versions,
    known_mindspeed_branches,
    mindspeed_arg_info,
    mindspeed_args,
    transformer_config_fields,
    transformer_config_types,
    verl_dataclasses,
)
from verl_preflight.sources.megatron import extract_classes
from verl_preflight.sources.mindspeed import FEATURES_DIR, extract_args

STACK = os.path.join(SHARED, "data", "stack")
V070 = os.path.join(SHARED, "corpus", "verl-v0.7.0")
GEN = os.path.join(ROOT, "tools", "gen_stack_data.py")
DATA = os.path.join(ROOT, "src", "verl_preflight", "data", "stack")

needs_stack = pytest.mark.skipif(not os.path.isdir(STACK), reason="../shared/data/stack is absent")
needs_v070 = pytest.mark.skipif(not os.path.isdir(V070), reason="../shared/corpus/verl-v0.7.0 is absent")

# the Megatron-LM tags of ../shared/data/stack, and the megatron-core releases on PyPI before them
MC_TAGS = ("0.16.1", "0.17.1", "0.18.0", "0.19.0")
MC_WHEELS = (
    "0.11.0",
    "0.12.0",
    "0.12.1",
    "0.12.2",
    "0.13.0",
    "0.13.1",
    "0.14.0",
    "0.15.0",
    "0.15.1",
    "0.15.2",
    "0.16.0",
)
MC_VERSIONS = MC_WHEELS + MC_TAGS
# TransformerConfig fields, ModelParallelConfig's included, per version (the shipped data)
MC_COUNTS = {"0.11.0": 152, "0.13.0": 187, "0.16.0": 242, "0.16.1": 242, "0.17.1": 259, "0.18.0": 278, "0.19.0": 306}
MS_COUNTS = {"core_r0.16.0": 138, "core_r0.18.0": 154}  # facts.md
MS_ONLY_016 = {"use_naive_l2norm", "use_fused_ring_attention_update"}
MS_BOTH = {"context_parallel_algo", "use_ascend_mc2", "use_fused_rmsnorm", "moe_alltoall_overlap_comm"}


# ---- Megatron-Core ---------------------------------------------------------------


def test_shipped_megatron_versions_and_counts():
    assert known_megatron_versions() == MC_VERSIONS
    counts = {v: len(transformer_config_fields(v)) for v in MC_COUNTS}
    assert counts == MC_COUNTS


def test_megatron_members_per_version():
    for version in MC_VERSIONS:
        fields = transformer_config_fields(version)
        # own fields and ModelParallelConfig's
        assert {"recompute_granularity", "recompute_method", "num_layers", "tensor_model_parallel_size"} <= fields
        # MindSpeed-Bridge / Megatron-LM command-line names are not TransformerConfig fields
        assert not {"use_ascend_gdn", "use_triton_gdn", "swiglu", "use_distributed_optimizer"} & fields
        assert "q_lora_rank" not in fields  # an MLATransformerConfig field
        assert "q_lora_rank" in transformer_config_fields(version, "MLATransformerConfig")
    # fields come and go between releases
    assert "moe_extended_tp" in transformer_config_fields("0.16.1")
    assert "moe_extended_tp" not in transformer_config_fields("0.17.1")
    assert "tensor_parallel_num_weight_shards" not in transformer_config_fields("0.18.0")
    assert "tensor_parallel_num_weight_shards" in transformer_config_fields("0.19.0")


def test_megatron_annotations_are_recorded():
    types = transformer_config_types("0.18.0")
    assert types["add_bias_linear"] == "bool"
    assert types["recompute_granularity"] == "Optional[Literal['full', 'selective']]"
    assert types["tensor_model_parallel_size"] == "int"  # inherited from ModelParallelConfig


def test_megatron_version_spellings_and_unknown_versions():
    assert transformer_config_fields("core_v0.18.0") == transformer_config_fields("0.18.0")
    assert transformer_config_fields("v0.18.0") == transformer_config_fields("0.18.0")
    assert transformer_config_fields("0.10.0") is None
    assert transformer_config_fields("0.18.0", "NoSuchConfig") is None


@pytest.mark.skipif(installed_megatron_version() != "0.16.1", reason="megatron-core 0.16.1 is not installed")
def test_installed_megatron_core_agrees_with_the_shipped_data():
    from verl_preflight.sources import megatron

    live = megatron._installed_classes("0.16.1")
    assert live is not None
    assert (
        transformer_config_fields()
        == transformer_config_fields("0.16.1")
        == frozenset(megatron._flatten(live, "TransformerConfig"))
    )
    shipped = json.loads(open(os.path.join(DATA, "megatron-core-0.16.1.json"), encoding="utf-8").read())
    assert live == shipped["classes"]


@needs_stack
def test_megatron_extractor_on_the_tagged_sources():
    for version in MC_TAGS:
        classes = extract_classes(os.path.join(STACK, "megatron-core", f"core_v{version}"))
        assert classes["TransformerConfig"]["bases"] == ["ModelParallelConfig"]
        assert classes["MLATransformerConfig"]["bases"] == ["TransformerConfig"]
        assert "recompute_granularity" in classes["TransformerConfig"]["fields"]
        assert "tensor_model_parallel_size" in classes["ModelParallelConfig"]["fields"]


def test_megatron_extractor_follows_the_dataclass_rules(tmp_path):
    core = tmp_path / "megatron" / "core"
    (core / "transformer").mkdir(parents=True)
    (core / "model_parallel_config.py").write_text(
        "from dataclasses import dataclass\n@dataclass\nclass ModelParallelConfig:\n    tp: int = 1\n"
    )
    (core / "transformer" / "transformer_config.py").write_text(
        textwrap.dedent(
            """
            import dataclasses
            from typing import ClassVar
            from ..model_parallel_config import ModelParallelConfig

            @dataclasses.dataclass(kw_only=True)
            class TransformerConfig(ModelParallelConfig):
                num_layers: int = 0
                registry: ClassVar[dict] = {}
                derived: int = dataclasses.field(init=False, default=0)
                tp: bool = False

                def __post_init__(self):
                    local: int = 3
            """
        )
    )
    classes = extract_classes(str(tmp_path))
    assert classes["TransformerConfig"]["fields"] == {"num_layers": "int", "tp": "bool"}
    from verl_preflight.sources.megatron import _flatten

    assert _flatten(classes, "TransformerConfig") == {"tp": "bool", "num_layers": "int"}
    assert extract_classes(str(tmp_path / "megatron")) is None


# ---- MindSpeed -------------------------------------------------------------------


def test_shipped_mindspeed_counts_and_members():
    assert known_mindspeed_branches() == tuple(MS_COUNTS)
    assert {b: len(mindspeed_args(b)) for b in MS_COUNTS} == MS_COUNTS
    old, new = mindspeed_args("core_r0.16.0"), mindspeed_args("core_r0.18.0")
    assert MS_ONLY_016 <= old
    assert not MS_ONLY_016 & new
    assert MS_BOTH <= old and MS_BOTH <= new
    # dest= wins over the option string; a helper called from register_args counts
    assert "use_gmm_fp8" in old and "no_use_gmm_fp8" not in old
    assert {"auto_settings", "auto_settings_ranks"} <= old
    assert "apply_wd_to_qk_layernorm" in new
    # Megatron-Core fields are not MindSpeed's arguments
    assert "recompute_granularity" not in old


def test_mindspeed_branch_spellings_and_details():
    assert mindspeed_args("0.16.0") == mindspeed_args("core_r0.16.0")
    assert mindspeed_args("core_r0.17.0") is None
    info = mindspeed_arg_info("core_r0.16.0")["use_naive_l2norm"]
    assert info["options"] == ["--use-naive-l2norm"]
    assert info["action"] == "store_true"
    assert info["file"] == "context_parallel/gated_delta_net.py"


@needs_stack
def test_mindspeed_extractor_counts_from_the_sources():
    found = {}
    for branch in MS_COUNTS:
        args = extract_args(os.path.join(STACK, "mindspeed", branch, FEATURES_DIR))
        found[branch] = len(args)
        assert MS_BOTH <= set(args)
        assert bool(MS_ONLY_016 & set(args)) == (branch == "core_r0.16.0")
    assert found == MS_COUNTS


def test_mindspeed_extractor_reads_only_what_register_args_reaches(tmp_path):
    feature = tmp_path / "moe" / "feat.py"
    feature.parent.mkdir()
    feature.write_text(
        textwrap.dedent(
            """
            CHOICES = ("a", "b")

            def _helper(group):
                group.add_argument("--from-helper", type=int, default=3)

            def _unused(group):
                group.add_argument("--never-called")

            class Feat:
                def register_args(self, parser):
                    group = parser.add_argument_group(title="x")
                    group.add_argument("-s", "--short-and-long", action="store_true")
                    group.add_argument("--no-thing", action="store_false", dest="thing")
                    group.add_argument("--pick", choices=CHOICES)
                    self._more(group)
                    _helper(group)

                def _more(self, group):
                    group.add_argument("--from-method")

                def validate_args(self, args):
                    parser.add_argument("--in-validate")
            """
        )
    )
    args = extract_args(str(tmp_path))
    assert set(args) == {"short_and_long", "thing", "pick", "from_method", "from_helper"}
    assert args["pick"]["choices"] == ["a", "b"]
    assert args["from_helper"]["default"] == 3 and args["from_helper"]["type"] == "int"
    assert args["thing"]["options"] == ["--no-thing"]


# ---- the shipped JSON against a fresh extraction ------------------------------------


@needs_stack
def test_shipped_json_equals_a_fresh_extraction():
    wheels = os.path.join(ROOT, ".venv", "wheels", "megatron-core")
    extra = ["--megatron-wheels", wheels] if os.path.isdir(wheels) else []
    proc = subprocess.run([sys.executable, GEN, "--check", *extra], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@needs_stack
def test_the_freshness_check_notices_an_edit(tmp_path):
    out = tmp_path / "stack"
    shutil.copytree(DATA, out)
    path = out / "mindspeed-core_r0.18.0.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["args"]["use_fused_rmsnorm"]
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    (out / "megatron-core-0.15.0.json").write_text("{}\n")
    proc = subprocess.run([sys.executable, GEN, "--check", "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "mindspeed-core_r0.18.0.json: stale" in proc.stderr
    assert "megatron-core-0.15.0.json: not generated" in proc.stderr


def test_reading_imports_neither_torch_nor_megatron_nor_verl():
    code = (
        f"import sys; sys.path.insert(0, {os.path.join(ROOT, 'src')!r});"
        "from verl_preflight.sources import transformer_config_fields, mindspeed_args, verl_dataclasses;"
        "transformer_config_fields(); transformer_config_fields('0.19.0'); mindspeed_args('core_r0.18.0');"
        "r = verl_dataclasses(); r and r.fields('verl.workers.config.ActorConfig');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'megatron', 'verl', 'mindspeed')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# ---- verl config dataclasses --------------------------------------------------------

needs_verl = pytest.mark.skipif(find_verl_root() is None, reason="verl is not installed (pip install --no-deps verl)")
LOSS_AGG_MODES = {"token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"}


@pytest.fixture(scope="module")
def installed():
    return verl_dataclasses()


@needs_verl
def test_verl_fields_with_inheritance(installed):
    actor = installed.fields("verl.workers.config.ActorConfig")
    assert {"loss_agg_mode", "ppo_micro_batch_size_per_gpu", "use_dynamic_bsz", "strategy", "_target_"} <= actor
    mcore = installed.fields("verl.workers.config.McoreActorConfig")
    assert actor < mcore and {"megatron", "profile"} <= mcore
    rollout = installed.fields("verl.workers.config.RolloutConfig")
    assert {"name", "tensor_model_parallel_size", "gpu_memory_utilization", "engine_kwargs"} <= rollout
    # the rollout's image limit is spelled limit_images; limit_imgs is no field anywhere
    assert "limit_images" in rollout
    for fields in (actor, mcore, rollout):
        assert "limit_imgs" not in fields
    assert installed.fields("verl.workers.config.NoSuchConfig") is None
    assert installed.missing_bases("verl.workers.config.McoreActorConfig") == []


@needs_verl
def test_verl_dict_typed_fields(installed):
    engine = "verl.workers.config.McoreEngineConfig"
    assert {"override_transformer_config", "override_mcore_model_config", "override_ddp_config"} <= (
        installed.dict_fields(engine)
    )
    assert installed.field_kind(engine, "override_transformer_config") == "dict"
    assert installed.field_kind(engine, "use_mbridge") == "other"
    assert "override_optimizer_config" in installed.dict_fields("verl.workers.config.McoreOptimizerConfig")
    actor = "verl.workers.config.McoreActorConfig"
    assert "megatron" not in installed.dict_fields(actor)
    assert installed.field_kind(actor, "megatron") == "dataclass"
    assert installed.nested_target(actor, "megatron") == "verl.workers.config.engine.McoreEngineConfig"
    assert installed.field_kind(actor, "no_such_field") is None


@needs_verl
def test_verl_enumerations(installed):
    for target in ("verl.workers.config.ActorConfig", "verl.workers.config.McoreActorConfig", "FSDPActorConfig"):
        assert installed.enum_values(target, "loss_agg_mode") == LOSS_AGG_MODES
    engine = "verl.workers.config.McoreEngineConfig"
    assert installed.enum_values(engine, "dtype") == {"bfloat16", "float16"}
    assert installed.enum_values(engine, "strategy") == {"megatron"}
    # a module constant, but only checked when disaggregation is enabled
    disagg = installed.enum_checks("verl.workers.config.disaggregation.DisaggregationConfig")
    backend = next(c for c in disagg if c.field == "transfer_backend")
    assert "nixl" in backend.values and backend.condition == "self.enabled"
    assert installed.enum_values("verl.workers.config.disaggregation.DisaggregationConfig", "transfer_backend") is None
    # FSDPOptimizerConfig may overwrite lr_scheduler_type before it checks it
    assert installed.enum_values("verl.workers.config.FSDPOptimizerConfig", "lr_scheduler_type") is None
    assert installed.enum_values("verl.workers.config.RolloutConfig", "name") is None


@needs_verl
def test_every_verl_target_in_the_config_tree_resolves(installed):
    import re

    targets = set()
    config = os.path.join(installed.root, "trainer", "config")
    for dirpath, _dirs, files in os.walk(config):
        for name in files:
            if name.endswith(".yaml"):
                text = open(os.path.join(dirpath, name), encoding="utf-8").read()
                targets |= set(re.findall(r"_target_:\s*(verl\.[\w.]+)", text))
    assert len(targets) > 40
    unresolved = sorted(t for t in targets if installed.fields(t) is None)
    assert unresolved == []
    # reward.py leaves RewardManagerConfig out of __all__: the YAML names its module
    assert "verl.workers.config.reward.RewardManagerConfig" in targets
    assert installed.resolve("verl.workers.config.RewardManagerConfig") is None


@needs_verl
def test_registry_is_cached_per_tree(installed):
    assert verl_dataclasses() is installed
    assert verl_dataclasses(os.path.join(installed.root, "trainer", "config")) is installed
    assert verl_dataclasses(os.path.dirname(installed.root)) is installed


@needs_v070
def test_verl_v070_tree_from_its_config_dir():
    reg = verl_dataclasses(os.path.join(V070, "verl", "trainer", "config"))
    assert reg is not None and reg.root == os.path.realpath(os.path.join(V070, "verl"))
    assert "limit_images" in reg.fields("verl.workers.config.RolloutConfig")
    assert "limit_imgs" not in reg.fields("verl.workers.config.RolloutConfig")
    assert reg.enum_values("verl.workers.config.ActorConfig", "loss_agg_mode") == LOSS_AGG_MODES - {"token-sum"}
    assert "override_transformer_config" in reg.dict_fields("verl.workers.config.McoreEngineConfig")
    # ppo_megatron_trainer's reward model names a class v0.7.0 does not define
    assert reg.fields("verl.workers.config.MegatronEngineConfig") is None


def test_verl_extraction_on_a_small_tree(tmp_path):
    root = tmp_path / "verl"
    (root / "workers" / "config").mkdir(parents=True)
    (root / "trainer" / "config").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "trainer" / "__init__.py").write_text("")
    (root / "trainer" / "config" / "__init__.py").write_text("")
    (root / "workers" / "__init__.py").write_text("")
    (root / "base_config.py").write_text(
        "from dataclasses import dataclass\n@dataclass\nclass BaseConfig:\n    _target_: str = ''\n"
    )
    (root / "workers" / "config" / "__init__.py").write_text(
        "from . import a\nfrom .a import *\nAliasConfig = AConfig\n__all__ = a.__all__ + ['AliasConfig']\n"
    )
    (root / "workers" / "config" / "consts.py").write_text("MODES = ('x', 'y', 'z')\n")
    (root / "workers" / "config" / "a.py").write_text(
        textwrap.dedent(
            """
            from dataclasses import dataclass, field
            from typing import Any, Optional
            from omegaconf import DictConfig
            from verl.base_config import BaseConfig
            from verl.utils.gone import GoneBase
            from .consts import MODES

            __all__ = ["Inner", "AConfig", "BConfig", "CConfig", "Orphan"]

            @dataclass
            class Hidden(BaseConfig):
                h: int = 0

            @dataclass
            class Inner(BaseConfig):
                k: int = 0

            @dataclass
            class AConfig(BaseConfig):
                mode: str = "x"
                kind: str = "p"
                level: int = 1
                backend: str = "n"
                extra: Optional[dict] = None
                free: Any = None
                conf: "DictConfig | None" = None
                teachers: dict[str, Inner] = field(default_factory=dict)
                inner: Inner = field(default_factory=Inner)
                maybe_inner: Optional[Inner] = None
                names: list[str] = field(default_factory=list)

                def __post_init__(self):
                    kinds = ["p", "q"]
                    if self.kind not in kinds:
                        raise ValueError(self.kind)
                    assert self.mode in MODES
                    assert self.level == 1
                    if self.extra is None:
                        return
                    assert self.backend in ("n", "m")

            @dataclass
            class BConfig(AConfig):
                def __post_init__(self):
                    assert self.mode in ["y", "z", "w"]
                    super().__post_init__()

            @dataclass
            class CConfig(AConfig):
                def __post_init__(self):
                    pass

            @dataclass
            class Orphan(GoneBase):
                own: int = 0
            """
        )
    )
    reg = verl_dataclasses(str(tmp_path))
    assert reg.root == os.path.realpath(root)
    target = "verl.workers.config.AConfig"
    assert reg.resolve(target).qualname == "verl.workers.config.a.AConfig"
    assert reg.resolve("verl.workers.config.AliasConfig").qualname == "verl.workers.config.a.AConfig"
    # a star import binds only what __all__ lists
    assert reg.resolve("verl.workers.config.Hidden") is None
    assert reg.fields("verl.workers.config.a.Hidden") == {"_target_", "h"}
    assert "_target_" in reg.fields(target) and "names" in reg.fields(target)
    assert reg.dict_fields(target) == {"extra", "free", "conf", "teachers"}
    assert reg.field_kind(target, "maybe_inner") == "dataclass"
    assert reg.field_kind(target, "names") == "other"
    assert reg.enum_values(target, "kind") == {"p", "q"}
    assert reg.enum_values(target, "mode") == {"x", "y", "z"}
    assert reg.enum_values(target, "level") == {1}
    assert reg.enum_values(target, "backend") is None  # after an early return
    assert reg.enum_values("verl.workers.config.a.BConfig", "mode") == {"y", "z"}  # both checks run
    assert reg.enum_values("verl.workers.config.a.CConfig", "mode") is None  # no super() call
    assert reg.missing_bases("verl.workers.config.a.Orphan") == ["verl.utils.gone.GoneBase"]
    assert reg.fields("verl.workers.config.a.Orphan") == {"own"}
    assert "verl.workers.config.a.Inner" in reg.dataclasses()
    assert reg.fields("Inner") == {"_target_", "k"}


def test_the_sections_verl_builds_are_read_from_its_call_sites():
    from verl_preflight.sources import find_verl_root
    from verl_preflight.sources.verl_builds import built_suffixes, is_built

    suffixes = built_suffixes(find_verl_root())
    assert suffixes is not None
    assert is_built(suffixes, ["actor_rollout_ref", "actor"]) and is_built(suffixes, ["critic"])
    assert is_built(suffixes, ["actor_rollout_ref", "actor", "policy_loss"])  # built with the actor
    assert is_built(suffixes, ["reward"]) is False  # RewardConfig: defined, exported, built nowhere
    assert is_built(None, ["reward"]) is None
