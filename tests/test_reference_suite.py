"""The reference scripts would start on the cluster: each launch's layout against the model's shape.

Hydra composing a launch (what the validator checks) is not enough: a layout can
compose and still stop on the cluster. For every reference script and every
profile, this test takes the launch exactly as the validator sees it (its JSON
output, `scripts[].profiles[].launches[].overrides`), works out the layout of
actor, ref and rollout, and checks it with its own arithmetic against the
model's shape in src/verl_preflight/data/models.yaml:

* pipeline split: Megatron-Core asserts layers % PP == 0 unless the first /
  last stage sizes are set (num_layers_in_first/last_pipeline_stage in
  override_transformer_config); then the stages between must share the rest
  evenly: (layers - first - last) % (PP - 2) == 0.
* tensor parallel: attention heads and, where known, Gated DeltaNet heads
  divisible by TP; query groups (KV heads) a multiple or a divisor of TP, as
  Megatron-Core's TransformerConfig checks (actor and ref).
* expert parallel: routed experts divisible by EP (training and rollout);
  with rollout EP > 1, verl asserts rollout EP == rollout TP x rollout DP.
* rollout weights per device (bf16, 2 bytes a parameter), below
  gpu_memory_utilization x device memory. With rollout EP == 1 each replica
  shards all weights over rollout TP: 2 x total / TP. With rollout EP > 1 the
  routed experts are spread over the EP devices and the rest over TP:
  2 x (not-expert / TP + experts / EP).
* the parameter terms of the actor update on its worst pipeline stage: bf16
  weights (2 bytes) + fp32 grads (4) + fp32 master weights and Adam m, v (12
  bytes, sharded). The optimizer states of dense weights are sharded over the
  data-parallel ranks including context parallel, world / (TP x PP); those of
  experts over the expert-data-parallel ranks, world / (ETP x EP x PP).
  Offload: verl's megatron.param_offload / optimizer_offload move state to the
  host between phases and back for the step, so they do not lower this peak;
  Megatron's CPU optimizer (override_optimizer_config.optimizer_cpu_offload=True)
  keeps the fraction optimizer_offload_fraction (Megatron's default 0.0) of the
  12-byte states on the host.
The parameters a stage holds are counted by hand from models.yaml's shapes
(tests/memory_by_hand.py, apart from the validator's memory.py); activations,
logits and the KV cache are checked per reference profile in tests/test_memory.py.

The validator's own formulas live in src/verl_preflight/target/layout.py and memory.py,
which its model-shape and memory-estimate rules and `render`'s summary use; this
test reads each launch's layout on its own (from the validator's JSON overrides) and
checks that the validator flags the regression fixtures with those rules and
reports nothing on the reference scripts, in every profile.

Device memory: 80 GB a GPU, 64 GB an Ascend NPU die (stated defaults). The
device is the profile's DEVICE, else trainer.device. The three fixtures in
tests/fixtures/regressions/layout/ are launches that compose but would not run;
each must be flagged, by the one check it is about (here and by the
validator's rule), and no reference launch may be.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass

import memory_by_hand as by_hand
import pytest
from conftest import FIXTURES, ROOT

from verl_preflight.target.layout import (
    DEVICE_MEMORY_GB,
    Role,
    models,
    stage_layers,
)
from verl_preflight.target.layout import model_for as table_model_for

MODELS_YAML = os.path.join(ROOT, "src", "verl_preflight", "data", "models.yaml")
TOOL = os.path.join(ROOT, "tools", "validate_scripts.py")

REFERENCE = [
    "examples/grpo_trainer/run_qwen3_5_35b_megatron.sh",
    "examples/grpo_trainer/run_qwen3_5_122b_a10b_megatron.sh",
    "examples/grpo_trainer/run_qwen3_5_397b_megatron.sh",
    "examples/ascend_extras/grpo_trainer/run_qwen3_235b_256k_megatron.sh",
    "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_megatron.sh",
]
LAYOUT_FIXTURES = os.path.join(FIXTURES, "regressions", "layout")
# fixture -> the one check that must flag it
REGRESSIONS = {
    "qwen3_235b_pp16_even_split.sh": "pipeline",
    "qwen3_5_397b_rollout_tp_only.sh": "rollout-memory",
    "qwen3_5_35b_gpu_no_cpu_optimizer.sh": "optimizer-memory",
}
# the check -> the validator's (rule, severity) for it
VALIDATOR_RULE = {
    "pipeline": ("model-shape", "error"),
    "rollout-memory": ("memory-estimate", "error"),  # 99 GB of weights on an 80 GB GPU: cannot fit at all
    "optimizer-memory": ("memory-estimate", "warning"),  # an estimate over the device: a warning
}
LAYOUT_RULES = ("model-shape", "memory-estimate")

# verl 0.9.1's defaults for the keys read here (trainer/config/*.yaml)
DEFAULTS = {
    "trainer.nnodes": 1,
    "trainer.n_gpus_per_node": 8,
    "actor_rollout_ref.rollout.tensor_model_parallel_size": 2,
    "actor_rollout_ref.rollout.data_parallel_size": 1,
    "actor_rollout_ref.rollout.expert_parallel_size": 1,
    "actor_rollout_ref.rollout.gpu_memory_utilization": 0.5,
}
MEGATRON_DEFAULTS = {
    "tensor_model_parallel_size": 1,
    "pipeline_model_parallel_size": 1,
    "context_parallel_size": 1,
    "expert_model_parallel_size": 1,
    "expert_tensor_parallel_size": None,  # None: Megatron uses ETP = TP
}


# --------------------------------------------------------------------------
# What the validator sees
# --------------------------------------------------------------------------
@functools.cache
def validator_json(paths: tuple[str, ...]) -> tuple[int, dict]:
    """(exit status, JSON report) of the validator over `paths`, run inside a test: in the
    session's cache folder (conftest), whose derived facts the tests share."""
    assert "PYTEST_CURRENT_TEST" in os.environ, "run at collection, it would read the user's cache"
    proc = subprocess.run(
        [sys.executable, TOOL, "--format", "json", "-j", "1", *paths],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@functools.cache
def validator_launches(paths: tuple[str, ...]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """(script, profile, overrides) for every launch of every profile, from the validator's JSON."""
    out = []
    for script in validator_json(paths)[1]["scripts"]:
        for profile in script["profiles"]:
            launches = profile.get("launches") or []
            assert len(launches) == 1, (script["path"], profile["env"])
            env = ",".join(f"{k}={v}" for k, v in sorted(profile["env"].items())) or "default"
            out.append((script["path"], env, tuple(launches[0]["overrides"])))
    return tuple(out)


def _value(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none"):
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text.strip("'\"")


def resolve(overrides) -> dict:
    """key -> value after the overrides in order ('+' / '++' add, '~' deletes, the last one wins)."""
    out: dict = {}
    for item in overrides:
        if item.startswith("~"):
            key = item[1:].split("=", 1)[0]
            for k in [k for k in out if k == key or k.startswith(key + ".")]:
                del out[k]
            continue
        if "=" not in item or item.startswith("-"):
            continue  # --config-name and the like
        key, value = item.split("=", 1)
        out[key.lstrip("+")] = _value(value)
    return out


# --------------------------------------------------------------------------
# Layout of one launch
# --------------------------------------------------------------------------
@dataclass
class Layout:
    model: str
    device: str
    world: int
    actor: Role
    ref: Role
    rollout_tp: int
    rollout_dp: int
    rollout_ep: int
    rollout_util: float
    cpu_optimizer_fraction: float  # share of the optimizer states kept on the host at the step


def _transformer_config(cfg: dict, role: str) -> dict:
    prefix = f"actor_rollout_ref.{role}.megatron.override_transformer_config."
    return {k[len(prefix) :]: v for k, v in cfg.items() if k.startswith(prefix)}


def _role(cfg: dict, role: str) -> Role:
    def get(name):
        own = cfg.get(f"actor_rollout_ref.{role}.megatron.{name}", "unset")
        if own != "unset":
            return own
        if role == "ref":  # ref.megatron.* interpolates the actor's value
            return cfg.get(f"actor_rollout_ref.actor.megatron.{name}", MEGATRON_DEFAULTS[name])
        return MEGATRON_DEFAULTS[name]

    # The ref inherits the actor's override_transformer_config as a whole, but
    # setting any ref key replaces that dict by the ref's own keys.
    otc = _transformer_config(cfg, "actor")
    if role == "ref" and _transformer_config(cfg, "ref"):
        otc = _transformer_config(cfg, "ref")
    tp = int(get("tensor_model_parallel_size"))
    etp = get("expert_tensor_parallel_size")
    return Role(
        tp=tp,
        pp=int(get("pipeline_model_parallel_size")),
        cp=int(get("context_parallel_size")),
        ep=int(get("expert_model_parallel_size")),
        etp=tp if etp is None else int(etp),
        first=otc.get("num_layers_in_first_pipeline_stage"),
        last=otc.get("num_layers_in_last_pipeline_stage"),
    )


def model_for(path: str) -> str:
    name = table_model_for(path)
    assert name, f"no model in models.yaml matches {path!r}"
    return name


def layout(env: str, overrides) -> Layout:
    cfg = resolve(overrides)
    get = lambda key: cfg.get(key, DEFAULTS.get(key))  # noqa: E731
    profile = dict(kv.split("=", 1) for kv in env.split(",") if "=" in kv)
    device = profile.get("DEVICE") or ("npu" if cfg.get("trainer.device") == "npu" else "gpu")
    opt = "actor_rollout_ref.actor.optim.override_optimizer_config."
    cpu_fraction = (  # Megatron's OptimizerConfig.optimizer_offload_fraction defaults to 0.0
        float(cfg.get(opt + "optimizer_offload_fraction", 0.0)) if cfg.get(opt + "optimizer_cpu_offload") else 0.0
    )
    return Layout(
        model=model_for(str(cfg["actor_rollout_ref.model.path"])),
        device=device,
        world=int(get("trainer.nnodes")) * int(get("trainer.n_gpus_per_node")),
        actor=_role(cfg, "actor"),
        ref=_role(cfg, "ref"),
        rollout_tp=int(get("actor_rollout_ref.rollout.tensor_model_parallel_size")),
        rollout_dp=int(get("actor_rollout_ref.rollout.data_parallel_size")),
        rollout_ep=int(get("actor_rollout_ref.rollout.expert_parallel_size")),
        rollout_util=float(get("actor_rollout_ref.rollout.gpu_memory_utilization")),
        cpu_optimizer_fraction=cpu_fraction,
    )


# --------------------------------------------------------------------------
# The arithmetic (stage_layers: verl_preflight.target.layout; parameters: memory_by_hand)
# --------------------------------------------------------------------------
def parameter_terms_gb(shape: dict, role: Role, world: int, cpu_fraction: float) -> tuple[int, float]:
    """(stage index, weights + grads + optimizer GB) of the actor's worst stage."""
    layers = shape["num_hidden_layers"]
    stages = stage_layers(layers, role.pp, role.first, role.last) or [layers // role.pp] * role.pp
    best = (0, 0.0)
    for s in range(role.pp):
        t = by_hand.update_gb(shape, stages, s, role.tp, role.pp, role.ep, role.etp, world, cpu_fraction, 0, 0, True)
        total = t["weights"] + t["grads"] + t["optimizer"]
        if total > best[1]:
            best = (s, total)
    return best


def rollout_weights_gb(shape: dict, lay: Layout) -> float:
    return by_hand.rollout_weights_gb(shape, lay.rollout_tp, lay.rollout_ep)


def problems(lay: Layout) -> list[tuple[str, str]]:
    """(check, message) for everything that would stop or not fit on the cluster."""
    shape = models()[lay.model]
    out = []
    for name, role in (("actor", lay.actor), ("ref", lay.ref)):
        if stage_layers(shape["num_hidden_layers"], role.pp, role.first, role.last) is None:
            out.append(
                (
                    "pipeline",
                    f"{name}: {shape['num_hidden_layers']} layers do not split over PP={role.pp}"
                    f" (first={role.first}, last={role.last})",
                )
            )
        for field in ("num_attention_heads", "linear_num_key_heads", "linear_num_value_heads"):
            if shape.get(field) and shape[field] % role.tp:
                out.append(("heads", f"{name}: {field}={shape[field]} not divisible by TP={role.tp}"))
        kv = shape["num_key_value_heads"]
        if kv % role.tp and role.tp % kv:
            out.append(("heads", f"{name}: num_key_value_heads={kv} neither multiple nor divisor of TP"))
        if shape["num_experts"] % role.ep:
            out.append(("experts", f"{name}: {shape['num_experts']} experts not divisible by EP={role.ep}"))
        if lay.world % (role.tp * role.pp * role.cp) or lay.world % (role.etp * role.ep * role.pp):
            out.append(("experts", f"{name}: world {lay.world} not divisible by TP x PP x CP or ETP x EP x PP"))
    if lay.rollout_ep > 1:
        if lay.rollout_ep != lay.rollout_tp * lay.rollout_dp:
            out.append(("rollout-ep", f"rollout EP={lay.rollout_ep} != TP {lay.rollout_tp} x DP {lay.rollout_dp}"))
        if shape["num_experts"] % lay.rollout_ep:
            out.append(("rollout-ep", f"{shape['num_experts']} experts not divisible by rollout EP={lay.rollout_ep}"))
    memory = DEVICE_MEMORY_GB[lay.device]
    weights = rollout_weights_gb(shape, lay)
    if weights >= lay.rollout_util * memory:
        out.append(
            ("rollout-memory", f"rollout weights {weights:.1f} GB/device >= {lay.rollout_util} x {memory:.0f} GB")
        )
    _, peak = parameter_terms_gb(shape, lay.actor, lay.world, lay.cpu_optimizer_fraction)
    if peak > memory:
        out.append(("optimizer-memory", f"actor weights, grads and optimizer {peak:.1f} GB/device > {memory:.0f} GB"))
    return out


def numbers(lay: Layout) -> dict:
    shape = models()[lay.model]
    return {
        "layers%PP": shape["num_hidden_layers"] % lay.actor.pp,
        "stages": stage_layers(shape["num_hidden_layers"], lay.actor.pp, lay.actor.first, lay.actor.last),
        "rollout_gb": round(rollout_weights_gb(shape, lay), 2),
        "budget_gb": round(lay.rollout_util * DEVICE_MEMORY_GB[lay.device], 2),
        "parameter_terms_gb": round(parameter_terms_gb(shape, lay.actor, lay.world, lay.cpu_optimizer_fraction)[1], 2),
    }


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------
def test_every_reference_script_and_profile_is_checked():
    seen = {(script, env) for script, env, _ in validator_launches(tuple(REFERENCE))}
    assert {s for s, _ in seen} == set(REFERENCE)
    # 3 profiles for each Qwen3.5 script (gpu; npu with and without MindSpeed-Bridge: the switch changes
    # nothing on GPU, so those profiles are one), one for each Ascend script
    assert len(seen) == 3 * 3 + 2


@pytest.mark.parametrize("script", REFERENCE, ids=os.path.basename)
def test_reference_launch_fits_its_model(script):
    """Every profile's launch of the script (the validator runs at test time, not at collection)."""
    launches = [(env, ovs) for s, env, ovs in validator_launches(tuple(REFERENCE)) if s == script]
    assert launches
    found = {env: (problems(lay), numbers(lay)) for env, ovs in launches for lay in [layout(env, ovs)]}
    assert {env: got for env, got in found.items() if got[0]} == {}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression_fixture_is_flagged_by_its_check(name):
    path = os.path.relpath(os.path.join(LAYOUT_FIXTURES, name), ROOT)
    ((_, env, overrides),) = validator_launches((path,))
    found = problems(layout(env, overrides))
    assert {check for check, _ in found} == {REGRESSIONS[name]}, found


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_validator_flags_regression_fixture_with_its_rule(name):
    path = os.path.relpath(os.path.join(LAYOUT_FIXTURES, name), ROOT)
    code, report = validator_json((path,))
    found = {(f["rule"], f["severity"]) for f in report["findings"] if f["rule"] in LAYOUT_RULES}
    assert found == {VALIDATOR_RULE[REGRESSIONS[name]]}, report["findings"]
    assert code == (1 if VALIDATOR_RULE[REGRESSIONS[name]][1] == "error" else 0)
    assert all("estimate" in f["message"] for f in report["findings"] if f["rule"] == "memory-estimate")


def test_validator_is_clean_on_the_reference_scripts_in_every_profile():
    code, report = validator_json(tuple(REFERENCE))
    assert code == 0 and report["findings"] == []
    # gpu (USE_MINDSPEED_BRIDGE changes nothing there), npu x 2 for each Qwen3.5 script; one per Ascend script
    assert sum(len(s["profiles"]) for s in report["scripts"]) == 3 * 3 + 2


def test_render_summary_shows_the_numbers_computed_here(capsys):
    """`render` reads each launch through the validator's own view (verl's defaults and
    interpolations); its rollout weights and the parameter terms of its worst actor stage must
    agree with this test's reading of the JSON overrides and the by-hand counts (3%: the hand
    count leaves out norms, biases and small GDN and vision terms)."""
    import re

    from verl_preflight.app.cli import main

    rendered = {}
    for script in REFERENCE:
        assert main(["render", script]) == 0  # in the session's cache folder (conftest)
        profile = None
        for line in capsys.readouterr().out.splitlines():
            m = re.match(r"^# (\S+) \[(.*)\]: ", line)
            if m:
                profile = (m.group(1), ",".join(sorted(m.group(2).split(", "))))
            m = re.match(r"^#     rollout: weights ([\d.]+) ", line)
            if m:
                rendered.setdefault(profile, {})["rollout"] = float(m.group(1))
            m = re.match(
                r"^#     actor update, worst stage (\d+)/\d+ .*: "
                r"weights ([\d.]+) \+ grads ([\d.]+) \+ optimizer ([\d.]+)",
                line,
            )
            if m:
                terms = sum(float(m.group(i)) for i in (2, 3, 4))
                rendered.setdefault(profile, {})["stage"] = (int(m.group(1)) - 1, terms)
    for script, env, overrides in validator_launches(tuple(REFERENCE)):
        lay = layout(env, overrides)
        shape = models()[lay.model]
        got = rendered[(script, env)]
        assert got["rollout"] == pytest.approx(rollout_weights_gb(shape, lay), rel=0.03, abs=0.1), (script, env)
        index, terms = got["stage"]
        stages = stage_layers(shape["num_hidden_layers"], lay.actor.pp, lay.actor.first, lay.actor.last)
        mine = by_hand.update_gb(
            shape,
            stages,
            index,
            lay.actor.tp,
            lay.actor.pp,
            lay.actor.ep,
            lay.actor.etp,
            lay.world,
            lay.cpu_optimizer_fraction,
            0,
            0,
            True,
        )
        want = mine["weights"] + mine["grads"] + mine["optimizer"]
        assert terms == pytest.approx(want, rel=0.03, abs=0.15), (script, env, index)


def test_layout_fixtures_are_the_listed_ones():
    assert sorted(n for n in os.listdir(LAYOUT_FIXTURES) if n.endswith(".sh")) == sorted(REGRESSIONS)


def test_models_yaml_covers_every_reference_model_with_sources():
    used = {layout(env, ovs).model for _, env, ovs in validator_launches(tuple(REFERENCE))}
    assert used == set(models())
    for name, entry in models().items():
        for field in (
            "num_hidden_layers",
            "num_attention_heads",
            "num_key_value_heads",
            "num_experts",
            "num_experts_per_tok",
        ):
            assert isinstance(entry[field], int) and entry[field] > 0, (name, field)
        assert 0 < entry["active_params_b"] < entry["total_params_b"], name
        assert entry["source"], name
    # shipped as package data, where a validator check can read it
    from importlib.resources import files

    with open(MODELS_YAML, encoding="utf-8") as fh:
        assert files("verl_preflight.data").joinpath("models.yaml").read_text(encoding="utf-8") == fh.read()


def _launch(script_suffix: str, **env):
    want = ",".join(f"{k}={v}" for k, v in sorted(env.items())) or "default"
    for script, got_env, ovs in validator_launches(tuple(REFERENCE)):
        if script.endswith(script_suffix) and got_env == want:
            return layout(got_env, ovs)
    raise AssertionError((script_suffix, want))


def test_the_numbers_the_issue_names():
    # 235B: 94 layers at PP 16 need 5 + 14 x 6 + 5, for the ref as well
    lay = _launch("run_qwen3_235b_256k_megatron.sh")
    assert 94 % lay.actor.pp == 14
    assert stage_layers(94, 16, None, None) is None
    assert stage_layers(94, lay.actor.pp, lay.actor.first, lay.actor.last) == [5] + [6] * 14 + [5]
    assert (lay.ref.first, lay.ref.last) == (5, 5)
    # 397B: a TP-only replica holds ~99 GB of weights per GPU (396.8B x 2 B / 8); with rollout EP 128
    # about 8.6 GB (10.2B not in routed experts over TP 8, 386.5B of experts over EP 128)
    q397 = models()["Qwen3.5-397B-A17B"]
    assert by_hand.rollout_weights_gb(q397, 8, 1) == pytest.approx(99.2, abs=0.1)
    gpu = _launch("run_qwen3_5_397b_megatron.sh", DEVICE="gpu")
    assert (gpu.rollout_tp, gpu.rollout_dp, gpu.rollout_ep) == (8, 16, 128)
    assert by_hand.rollout_weights_gb(q397, 8, 128) == pytest.approx(2 * (10.22 / 8 + 386.55 / 128), abs=0.01)
    # 35B on 8 GPUs: 11 GB weights + 22 GB grads + ~52.7 GB Adam states without the CPU optimizer
    # (4.0B of experts a GPU with one expert-data-parallel copy: 48.3 GB; 1.46B else over DP 4: 4.4 GB)
    gpu35 = _launch("run_qwen3_5_35b_megatron.sh", DEVICE="gpu")
    shape = models()["Qwen3.5-35B-A3B"]
    assert parameter_terms_gb(shape, gpu35.actor, 8, 0.0)[1] == pytest.approx(85.6, abs=0.3)
    assert gpu35.cpu_optimizer_fraction == 1.0
    assert parameter_terms_gb(shape, gpu35.actor, 8, 1.0)[1] == pytest.approx(32.9, abs=0.2)


def test_a_ref_key_replaces_the_inherited_transformer_config():
    base = ["actor_rollout_ref.model.path=/m/Qwen3-235B-A22B", "trainer.n_gpus_per_node=16", "trainer.nnodes=16"]
    actor = [
        "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=16",
        "+actor_rollout_ref.actor.megatron.override_transformer_config.num_layers_in_first_pipeline_stage=5",
        "+actor_rollout_ref.actor.megatron.override_transformer_config.num_layers_in_last_pipeline_stage=5",
    ]
    inherited = layout("default", base + actor)
    assert (inherited.ref.pp, inherited.ref.first, inherited.ref.last) == (16, 5, 5)
    replaced = layout(
        "default", base + actor + ["++actor_rollout_ref.ref.megatron.override_transformer_config.use_flash_attn=True"]
    )
    assert (replaced.ref.first, replaced.ref.last) == (None, None)
    pipeline = [m for c, m in problems(replaced) if c == "pipeline"]
    assert len(pipeline) == 1 and pipeline[0].startswith("ref:")
    assert not [m for c, m in problems(inherited) if c == "pipeline"]


def test_stage_split_rules():
    assert stage_layers(48, 4, None, None) == [12] * 4
    assert stage_layers(60, 4, None, None) == [15] * 4
    assert stage_layers(94, 16, 4, 5) is None  # 85 over 14 stages
    assert stage_layers(94, 16, 4, None) == [4] + [6] * 15  # only the first set: the other 15 share the rest
    assert stage_layers(10, 2, 5, 5) == [5, 5]
    assert stage_layers(10, 2, 4, 5) is None
