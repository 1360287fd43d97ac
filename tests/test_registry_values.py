"""Values verl looks up in its registries or dispatches on (sources/verl_registries.py, rule config-value).

The sets are checked against an oracle of another kind: regular expressions over
the same files (the decorators, `register(...)` calls and dict literals as they are
written), so a registration the `ast` reader misses, or one it invents, shows. The
rule is run on small scripts at verl 0.9.1 (installed), 0.8.0 (its wheel in
.venv/wheels) and the v0.7.0 and v0.4.1 trees of ../shared/corpus.
"""

from __future__ import annotations

import glob
import json
import os
import re
import textwrap
import zipfile

import pytest
from conftest import ROOT, SHARED, run_cli, write_file

from verl_preflight.sources import find_verl_root
from verl_preflight.sources.verl_registries import FIRST_STEP, START, read_sources

INSTALLED = find_verl_root()
V070 = os.path.join(SHARED, "corpus", "verl-v0.7.0", "verl")
V041 = os.path.join(SHARED, "corpus", "verl-v0.4.1", "verl")
WHEEL_080 = os.path.join(ROOT, ".venv", "wheels", "verl-0.8.0-py3-none-any.whl")

needs_verl = pytest.mark.skipif(INSTALLED is None, reason="verl is not installed (pip install --no-deps verl)")
needs_v070 = pytest.mark.skipif(not os.path.isdir(V070), reason="../shared/corpus/verl-v0.7.0 is absent")
needs_v041 = pytest.mark.skipif(not os.path.isdir(V041), reason="../shared/corpus/verl-v0.4.1 is absent")
needs_080 = pytest.mark.skipif(not os.path.isfile(WHEEL_080), reason=".venv/wheels has no verl 0.8.0 wheel")

ADV, LOSS, ROLLOUT = "algorithm.adv_estimator", "actor_rollout_ref.actor.policy_loss.loss_mode", "actor_rollout_ref"


def _text(root: str, rel: str) -> str:
    with open(os.path.join(root, rel), encoding="utf-8") as fh:
        return fh.read()


def _oracle_estimators(root: str) -> set[str]:
    """The estimators `@register_adv_est(...)` names in core_algos.py, by regular expression."""
    text = _text(root, "trainer/ppo/core_algos.py")
    members = dict(re.findall(r"^\s+([A-Z_]+)\s*=\s*\"([a-z_]+)\"", text, re.M))
    out = set()
    for arg in re.findall(r"@register_adv_est\(\s*([^)]*?)\s*\)", text):
        arg = arg.strip().strip(",").strip()
        out.add(members[arg.split(".")[-1]] if arg.startswith("AdvantageEstimator.") else arg.strip("\"'"))
    return out


def _oracle_losses(root: str) -> set[str]:
    return set(re.findall(r"@register_policy_loss\(\"([\w-]+)\"\)", _text(root, "trainer/ppo/core_algos.py")))


def _oracle_managers(folder: str) -> set[str]:
    """Reward managers registered by the modules of one registry's package."""
    out = set()
    for path in glob.glob(os.path.join(folder, "*.py")):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        names = re.findall(r"^from [\w.]*reward_manager(?:\.registry)? import register(?: as (\w+))?$", text, re.M)
        names += re.findall(r"^from \.registry import register(?: as (\w+))?$", text, re.M)
        for alias in {n or "register" for n in names}:
            out |= set(re.findall(rf"@{alias}\(\"([\w-]+)\"\)", text))
    return out


def _checks(root: str, key: str, kind: str | None = None) -> list:
    return [c for c in read_sources(root).checks if key in c.keys and (kind is None or c.kind == kind)]


def _raise_line(root: str, check) -> str:
    path, line = check.raise_at
    with open(os.path.join(os.path.dirname(root), path), encoding="utf-8") as fh:
        return fh.read().splitlines()[line - 1]


def _registry_values(root: str, key: str) -> set:
    found = {frozenset(c.values) for c in _checks(root, key, "registry")}
    assert len(found) == 1, found
    return set(found.pop())


@pytest.fixture(scope="module")
def verl080(tmp_path_factory):
    if not os.path.isfile(WHEEL_080):
        pytest.skip(".venv/wheels has no verl 0.8.0 wheel")
    out = tmp_path_factory.mktemp("verl080")
    with zipfile.ZipFile(WHEEL_080) as wheel:
        wheel.extractall(out, [m for m in wheel.namelist() if m.startswith("verl/")])
    return str(out / "verl")


def _modern(root: str) -> None:
    """What verl 0.8.0 and 0.9.1 share: one registry per name, each read from its decorators."""
    adv = _checks(root, ADV, "registry")
    assert len(adv) == 1 and set(adv[0].values) == _oracle_estimators(root) and "grpo" in adv[0].values
    assert adv[0].site.phase == FIRST_STEP and adv[0].registry == "ADV_ESTIMATOR_REGISTRY"
    assert adv[0].raise_at[0] == "verl/trainer/ppo/core_algos.py" and "raise ValueError" in _raise_line(root, adv[0])
    # compute_advantage handles gae and grpo itself before the lookup
    assert {(g.key, tuple(g.values), g.negated) for g in adv[0].guards} == {
        (ADV, ("gae",), True),
        (ADV, ("grpo",), True),
    }
    assert _registry_values(root, LOSS) == _oracle_losses(root)
    managers = _checks(root, "reward.reward_manager.name", "registry")
    assert len(managers) == 1 and managers[0].site.phase == START
    assert set(managers[0].values) == _oracle_managers(
        os.path.join(root, "experimental", "reward_loop", "reward_manager")
    )
    assert [(g.key, set(g.values), g.negated) for g in managers[0].guards] == [
        ("reward.reward_manager.source", {"register"}, False)
    ]
    source = _checks(root, "reward.reward_manager.source", "dispatch")
    assert [set(c.values) for c in source] == [{"register", "importlib"}]
    pairs = _checks(root, f"{ROLLOUT}.rollout.mode", "registry")
    assert pairs and all(c.keys == (f"{ROLLOUT}.rollout.name", f"{ROLLOUT}.rollout.mode") for c in pairs)
    text = _text(root, "workers/rollout/base.py")
    assert set(pairs[0].values) == set(re.findall(r"\(\"(\w+)\", \"(\w+)\"\): \"verl", text))
    replicas = _text(root, "workers/rollout/replica.py")
    names = [c for c in _checks(root, f"{ROLLOUT}.rollout.name", "registry") if len(c.keys) == 1]
    assert [set(c.values) for c in names] == [set(re.findall(r"RolloutReplicaRegistry\.register\(\"(\w+)\"", replicas))]
    assert {"vllm", "sglang", "trtllm"} <= names[0].values and "hf" not in names[0].values


@needs_verl
def test_registries_of_verl_0_9_1():
    _modern(INSTALLED)
    assert "dro" in _registry_values(INSTALLED, LOSS)  # new in 0.9.1
    exts = {e.env: e for e in read_sources(INSTALLED).extensions}
    assert exts["VERL_USE_EXTERNAL_MODULES"].what == "modules"
    # 0.9.1 loads installed packages' verl.plugins entry points unless told "none"
    assert exts["VERL_USE_EXTERNAL_PLUGINS"].on_by_default() and "none" in exts["VERL_USE_EXTERNAL_PLUGINS"].off


@needs_080
def test_registries_of_verl_0_8_0(verl080):
    _modern(verl080)
    assert "dro" not in _registry_values(verl080, LOSS)
    assert [e.env for e in read_sources(verl080).extensions] == ["VERL_USE_EXTERNAL_MODULES"]


@needs_v070
def test_registries_of_verl_0_7_0():
    assert _registry_values(V070, ADV) == _oracle_estimators(V070)
    assert _registry_values(V070, LOSS) == _oracle_losses(V070)
    # reward_manager.name (default ${oc.select:reward_model.reward_manager,naive}) in the legacy registry
    managers = _checks(V070, "reward_manager.name", "registry")
    assert set(managers[0].values) == _oracle_managers(os.path.join(V070, "workers", "reward_manager")) | {
        "rate_limited"  # registered from experimental/reward_loop/reward_manager/limited.py as the legacy one too
    }
    pairs = {frozenset(c.values) for c in _checks(V070, f"{ROLLOUT}.rollout.mode", "registry")}
    assert pairs == {frozenset({("vllm", "async"), ("sglang", "async")})}


@needs_v041
def test_dispatch_chains_of_verl_0_4_1():
    # RayPPOTrainer.__init__: if gae / elif in [...] / else raise NotImplementedError, when the job starts
    (init,) = [c for c in _checks(V041, ADV, "dispatch") if c.site.function.endswith("RayPPOTrainer.__init__")]
    assert init.site.phase == START and init.error == "NotImplementedError"
    assert "raise NotImplementedError" in _raise_line(V041, init)
    assert set(init.values) == _oracle_estimators(V041)
    assert init.raises(("gpg",)) and not init.raises(("grpo",))
    rollouts = {c.site.function.split(".")[2]: c for c in _checks(V041, f"{ROLLOUT}.rollout.name", "dispatch")}
    assert set(rollouts["fsdp_workers"].values) == {"hf", "vllm", "sglang", "sglang_async"}
    assert set(rollouts["megatron_workers"].values) == {"vllm", "sglang", "sglang_async"}
    # 0.4.1 had no "vanilla" in the registry: dp_actor takes it in an if before the lookup
    (loss,) = [c for c in _checks(V041, LOSS, "registry") if "dp_actor" in c.site.function]
    assert set(loss.values) == {"clip_cov", "kl_cov"} and not loss.guards[0].holds("vanilla")
    assert read_sources(V041).extensions == ()


@needs_verl
def test_the_checks_kept_on_disk_are_those_read_from_the_sources(monkeypatch):
    """The registry and dispatch checks of a release are derived once per machine: what a later
    run loads from the cache equals what reading the sources gives, every field (the places each
    value is registered too, which equality leaves out)."""
    from verl_preflight.sources import verl_registries as vr
    from verl_preflight.store import session

    root = os.path.realpath(INSTALLED)
    read = tuple(vr._read(root)._reader.checks())
    session.begin()  # kept by this session, not by an earlier test's (whose files may be gone)
    assert vr._checks(root) == read  # kept now if it was not yet
    session.begin()  # a new run: ...
    monkeypatch.setattr(vr._Reader, "checks", lambda self: pytest.fail("read from the sources again"))
    loaded = vr._checks(root)  # ... reads them from the disk
    assert loaded == read and [c.registered for c in loaded] == [c.registered for c in read]


def test_reader_on_a_small_tree(tmp_path):
    root = tmp_path / "verl"
    for sub in ("trainer/ppo", "trainer/config", "workers/config", "extra", "tests"):
        (root / sub).mkdir(parents=True, exist_ok=True)
        (root / sub / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "base_config.py").write_text("")
    (root / "trainer" / "main_ppo.py").write_text("")
    (root / "trainer" / "ppo" / "core_algos.py").write_text(
        textwrap.dedent(
            """
            from enum import Enum
            REG = {"literal": None}

            class Est(str, Enum):
                ONE = "one"
                TWO = "two"

            def register_adv_est(name_or_enum):
                def decorator(fn):
                    name = name_or_enum.value if isinstance(name_or_enum, Enum) else name_or_enum
                    REG[name] = fn
                    return fn
                return decorator

            def get_adv_estimator_fn(name_or_enum):
                name = name_or_enum.value if isinstance(name_or_enum, Enum) else name_or_enum
                if name not in REG:
                    raise ValueError(name)
                return REG[name]

            @register_adv_est(Est.ONE)
            def one(): ...

            REG["assigned"] = None
            """
        )
    )
    # registered elsewhere through an alias; a registration under tests/ does not count
    (root / "extra" / "more.py").write_text(
        "from verl.trainer.ppo.core_algos import register_adv_est as reg\n@reg('three')\ndef three(): ...\n"
    )
    (root / "tests" / "t.py").write_text(
        "from verl.trainer.ppo.core_algos import register_adv_est\n@register_adv_est('test_only')\ndef t(): ...\n"
    )
    (root / "trainer" / "ppo" / "ray_trainer.py").write_text(
        textwrap.dedent(
            """
            from verl.trainer.ppo import core_algos
            from verl.trainer.ppo.core_algos import Est

            def compute_advantage(data, adv_estimator):
                if adv_estimator == Est.TWO:
                    return 2
                return core_algos.get_adv_estimator_fn(adv_estimator)

            class RayPPOTrainer:
                def __init__(self, config):
                    self.config = config
                    if self.config.trainer.mode == "old":
                        raise ValueError("removed")
                    kind = self.config.trainer.kind
                    if kind == "a":
                        pass
                    elif kind in ("b", "c"):
                        pass
                    else:
                        raise NotImplementedError(kind)
                    if self.flag:
                        raise ValueError("not a config test: no check")
            """
        )
    )
    sources = read_sources(str(root))
    (adv,) = [c for c in sources.checks if c.keys == (ADV,)]
    assert set(adv.values) == {"literal", "one", "assigned", "three"}
    assert adv.registered["three"] == ("verl/extra/more.py", 2)
    assert [(g.key, set(g.values), g.negated) for g in adv.guards] == [(ADV, {"two"}, True)]
    mode = [c for c in sources.checks if c.keys == ("trainer.mode",)]
    assert len(mode) == 1 and mode[0].values is None and mode[0].raises(("old",)) and not mode[0].raises(("new",))
    kind = [c for c in sources.checks if c.keys == ("trainer.kind",)]
    assert len(kind) == 1 and set(kind[0].values) == {"a", "b", "c"} and kind[0].error == "NotImplementedError"
    assert len(sources.checks) == 3


# ---- the rule, on scripts ---------------------------------------------------------------------

GOOD_BATCHES = "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1"


def _findings(capsys, tmp_path, body: str, *args) -> list[dict]:
    script = write_file(tmp_path, "run.sh", "#!/usr/bin/env bash\n" + textwrap.dedent(body))
    code, out, _ = run_cli(capsys, "--no-cache", "--format", "json", *args, script)
    assert code in (0, 1)
    return [f for f in json.loads(out)["findings"] if f["rule"] == "config-value"]


def _launch(*overrides: str, head: str = "", module: str = "verl.trainer.main_ppo") -> str:
    lines = " \\\n    ".join([*overrides, GOOD_BATCHES, '"$@"'])
    return f"{head}python3 -m {module} \\\n    {lines}\n"


@needs_verl
def test_rule_at_0_9_1(capsys, tmp_path):
    found = _findings(
        capsys,
        tmp_path,
        _launch(
            "algorithm.adv_estimator=GRPO",
            "actor_rollout_ref.actor.policy_loss.loss_mode=vanila",
            "actor_rollout_ref.rollout.name=hf",
            "reward.reward_manager.name=prime",
        ),
    )
    by_line = {f["line"]: f for f in found}
    assert sorted(by_line) == [3, 4, 5, 6] and all(f["severity"] == "error" for f in found)
    assert "did you mean 'grpo'" in by_line[3]["message"] and "at the first training step" in by_line[3]["message"]
    assert "verl/trainer/ppo/core_algos.py:" in by_line[3]["message"]
    assert "did you mean 'vanilla'" in by_line[4]["message"]
    assert "when the job starts" in by_line[5]["message"] and by_line[5]["key"] == "actor_rollout_ref.rollout.name"
    assert "prime" in by_line[6]["message"] and "REWARD_MANAGER" in by_line[6]["message"]


@needs_verl
def test_rule_leaves_valid_unknown_and_unused_values_alone(capsys, tmp_path):
    body = _launch(
        "algorithm.adv_estimator=gae",
        "actor_rollout_ref.actor.policy_loss.loss_mode=${LOSS}",
        "actor_rollout_ref.rollout.name=sglang",
        # with source=importlib the name is a class of the user's module, not a registry entry
        "reward.reward_manager.source=importlib",
        "reward.reward_manager.name=MyRewardManager",
        "reward.reward_manager.module.path=/work/my_reward.py",
    )
    assert _findings(capsys, tmp_path, body) == []


@needs_verl
@pytest.mark.parametrize(
    ("head", "extra", "module", "says"),
    [
        ("export VERL_USE_EXTERNAL_MODULES=my_pkg.estimators\n", (), "verl.trainer.main_ppo", "VERL_USE_EXTERNAL"),
        ("", ("reward.custom_reward_function.path=/work/reward.py",), "verl.trainer.main_ppo", "custom_reward"),
        ("", ("+actor_rollout_ref.model.external_lib=my_pkg",), "verl.trainer.main_ppo", "external_lib"),
    ],
)
def test_a_registry_the_launch_can_extend_gives_an_info(capsys, tmp_path, head, extra, module, says):
    body = _launch("algorithm.adv_estimator=my_estimator", *extra, head=head, module=module)
    (found,) = _findings(capsys, tmp_path, body)
    assert found["severity"] == "info" and says in found["message"] and "may register it" in found["message"]


@needs_080
def test_rule_at_0_8_0(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", os.path.dirname(WHEEL_080))
    body = _launch("actor_rollout_ref.actor.policy_loss.loss_mode=dro", "actor_rollout_ref.rollout.mode=sync")
    found = {f["line"]: f for f in _findings(capsys, tmp_path, body, "--verl", "0.8.0")}
    assert sorted(found) == [3, 4]
    assert "verl 0.8.0" in found[3]["message"] and "POLICY_LOSS_REGISTRY" in found[3]["message"]
    assert "refuses mode=sync" in found[4]["message"] and "rollout.py:" in found[4]["message"]


@needs_v070
def test_rule_at_0_7_0(capsys, tmp_path):
    config = os.path.join(V070, "trainer", "config")
    body = _launch("reward_model.reward_manager=dapo_v2", "actor_rollout_ref.rollout.name=hf")
    found = {f["line"]: f for f in _findings(capsys, tmp_path, body, "--verl-config", config)}
    assert sorted(found) == [3, 4]
    # reward_manager.name takes reward_model.reward_manager through ${oc.select:...}: reported at the override
    assert (
        found[3]["key"] == "reward_model.reward_manager"
        and "verl reads it as reward_manager.name" in (found[3]["message"])
    )
    assert "did you mean 'dapo'" in found[3]["message"]
    # the workers build the rollout first: get_rollout_class's assert is what the launch meets
    assert "verl/workers/rollout/base.py:" in found[4]["message"] and "AssertionError" in found[4]["message"]
    assert _findings(capsys, tmp_path, _launch("actor_rollout_ref.rollout.mode=async"), "--verl-config", config) == []


@needs_v041
def test_rule_at_0_4_1(capsys, tmp_path):
    config = os.path.join(V041, "trainer", "config")
    # an estimator 0.4.1 does not have: RayPPOTrainer.__init__ raises when the job starts
    body = _launch("algorithm.adv_estimator=gpg", "actor_rollout_ref.rollout.mode=sync")
    (found,) = _findings(capsys, tmp_path, body, "--verl-config", config)
    assert found["line"] == 3 and "verl/trainer/ppo/ray_trainer.py:" in found["message"]
    assert "NotImplementedError" in found["message"] and "stops at start" in found["message"]
    # hf is a rollout of the FSDP workers only
    assert _findings(capsys, tmp_path, _launch("actor_rollout_ref.rollout.name=hf"), "--verl-config", config) == []
    body = _launch("actor_rollout_ref.rollout.name=hf", "actor_rollout_ref.actor.strategy=megatron")
    (found,) = _findings(capsys, tmp_path, body, "--verl-config", config)
    assert found["line"] == 3 and "verl/workers/megatron_workers.py:" in found["message"]
    # vanilla is taken before the registry lookup
    body = _launch("actor_rollout_ref.actor.policy_loss.loss_mode=vanilla")
    assert _findings(capsys, tmp_path, body, "--verl-config", config) == []
