"""Differential test: the config check agrees with Hydra on generated override lists.

2,000+ override lists are generated from verl 0.9.1's own tree: existing and
missing keys, `+`, `++`, `~` (with and without a value), config-group
selections (good and bad), null defaults, interpolated keys (the ref's
`${oc.select:...}` nodes), list and dict values, Hydra's typed `hydra` node,
sweeps and syntax errors. For each list, the validator's verdict (passes or
not) and the first offending override must equal Hydra's.

Hydra's verdict comes from Hydra's own code path: parse every override, compose
with the group selections, then `ConfigLoaderImpl._apply_overrides_to_config`
one override at a time on a copy. A sample is also run through the public
`hydra.compose` to show that this oracle is hydra.compose.
"""

from __future__ import annotations

import copy
import json
import random

import pytest

from verl_preflight.checks.config import check_overrides
from verl_preflight.verl_config import ConfigCache, compose_raw

N_LISTS = 2100
N_COMPOSE_SAMPLE = 60
SEED = 20261129


def _leaves(node, prefix=""):
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict) and v:
                out.append(("dict", path, v))
                out.extend(_leaves(v, path))
            else:
                out.append(("leaf", path, v))
    return out


class Generator:
    def __init__(self, tree: dict, rng: random.Random):
        self.rng = rng
        nodes = [n for n in _leaves(tree) if not n[1].startswith("hydra")]
        self.leaves = [p for kind, p, v in nodes if kind == "leaf" and not isinstance(v, list)]
        self.nulls = [p for kind, p, v in nodes if kind == "leaf" and v is None]
        self.dicts = [p for kind, p, v in nodes if kind == "dict"]
        self.lists = [p for kind, p, v in nodes if isinstance(v, list)]
        self.interp = [p for kind, p, v in nodes if isinstance(v, str) and "${" in v]
        self.ref_paths = [p for p in self.leaves + self.dicts if p.startswith("actor_rollout_ref.ref.megatron")]

    def value(self) -> str:
        r = self.rng
        return r.choice(
            [
                "1",
                "0",
                "-3",
                "2.5",
                "1e-6",
                "True",
                "false",
                "null",
                "abc",
                "'a b'",
                "[1,2]",
                "[]",
                "{a:1}",
                "{}",
                "'${trainer.nnodes}'",
                "bfloat16",
                '"x,y"',
            ]
        )

    def key(self) -> str:
        r = self.rng
        pick = r.random()
        if pick < 0.35:
            return r.choice(self.leaves)
        if pick < 0.45:
            return r.choice(self.nulls)
        if pick < 0.55:
            return r.choice(self.dicts)
        if pick < 0.65:
            return r.choice(self.ref_paths) if self.ref_paths else r.choice(self.leaves)
        if pick < 0.72:
            return r.choice(self.dicts) + "." + r.choice(["use_flash_attn", "new_key", "x", "use_ascend_gdn"])
        if pick < 0.78:
            leaf = r.choice(self.leaves)
            return leaf[:-1] if len(leaf.split(".")[-1]) > 3 else leaf + "s"  # a typo
        if pick < 0.82:
            return r.choice(self.leaves) + ".below"  # through a value
        if pick < 0.86:
            return "brand_new." + r.choice(["a", "b.c"])
        if pick < 0.90:
            return r.choice(self.lists) if self.lists else "trainer.logger"
        if pick < 0.94:
            return r.choice(["hydra.run.dir", "hydra.job.chdir", "hydra.nope", "hydra.verbose"])
        return r.choice(self.interp) if self.interp else r.choice(self.leaves)

    def override(self) -> str:
        r = self.rng
        pick = r.random()
        if pick < 0.02:
            return r.choice(["a.b=[1,2", "=x", "a..b=1", "x=}", "+=1"])
        if pick < 0.04:
            return f"{r.choice(self.leaves)}=1,2"
        key = self.key()
        prefix = r.choices(["", "+", "++", "~"], weights=[50, 25, 12, 13])[0]
        if prefix == "~":
            return "~" + key + (("=" + self.value()) if r.random() < 0.3 else "")
        return f"{prefix}{key}={self.value()}"

    def groups(self) -> list[str]:
        r = self.rng
        pick = r.random()
        if pick < 0.55:
            return []
        if pick < 0.75:
            return ["model_engine=megatron"]
        if pick < 0.9:
            return ["model_engine=dp"]
        return [
            r.choice(
                [
                    "model_engine=megatorn",
                    "+model_engine=megatron",
                    "model_engine={a:1}",
                    "actor@actor_rollout_ref.actor=megatron_actor",
                ]
            )
        ]

    def case(self):
        r = self.rng
        name = r.choice(["ppo_trainer", "ppo_megatron_trainer"])
        items = [self.override() for _ in range(r.randint(1, 6))]
        if r.random() < 0.2 and items:  # the same key twice: order matters
            items.append(items[0].lstrip("+") if r.random() < 0.5 else "+" + items[0].lstrip("+~"))
        groups = self.groups()
        at = r.randint(0, len(items))
        return name, items[:at] + groups + items[at:]


class HydraOracle:
    """Hydra's verdict: index of the first override Hydra fails on, or None."""

    def __init__(self, config_dir: str):
        from hydra._internal.config_loader_impl import ConfigLoaderImpl
        from hydra.core.override_parser.overrides_parser import OverridesParser

        self.config_dir = config_dir
        self.parser = OverridesParser.create()
        self.apply = ConfigLoaderImpl._apply_overrides_to_config
        self.composed = {}
        from hydra._internal.config_repository import ConfigRepository
        from hydra._internal.utils import create_config_search_path

        self.repo = ConfigRepository(config_search_path=create_config_search_path(config_dir))

    def is_group(self, override) -> bool:
        return override.package is not None or (
            self.repo.group_exists(override.key_or_group) and not isinstance(override.value(), dict)
        )

    def verdict(self, config_name: str, overrides: list[str], group_names=None) -> int | None:
        from hydra._internal.config_loader_impl import ConfigLoaderImpl
        from hydra.types import RunMode

        parsed = []
        for i, text in enumerate(overrides):
            try:
                parsed.append(self.parser.parse_override(text))
            except Exception:
                return i
        for i, o in enumerate(parsed):
            try:
                ConfigLoaderImpl.validate_sweep_overrides_legal([o], RunMode.RUN, True)
            except Exception:
                return i
        group_idx = [i for i, o in enumerate(parsed) if not o.is_sweep_override() and self.is_group(o)]
        key = (config_name, tuple(overrides[i] for i in group_idx))
        if key not in self.composed:
            try:
                self.composed[key] = compose_raw(self.config_dir, config_name, list(key[1]))
            except Exception as err:
                self.composed[key] = str(err)
        if isinstance(self.composed[key], str):
            return self._blamed(config_name, overrides, parsed, group_idx, self.composed[key])
        cfg = copy.deepcopy(self.composed[key])
        for i, o in enumerate(parsed):
            if i in group_idx:
                continue
            try:
                self.apply([o], cfg)
            except Exception:
                return i
        return None

    def _blamed(self, config_name, overrides, parsed, group_idx, message) -> int:
        """The group override Hydra's message names; else the shortest failing prefix."""
        named = [i for i in group_idx if overrides[i] in message]
        if not named:
            named = [
                i
                for i in group_idx
                if f"'{parsed[i].key_or_group}/" in message or f"'{parsed[i].key_or_group}'" in message
            ]
        if named:
            return named[0]
        for n in range(1, len(group_idx) + 1):
            try:
                compose_raw(self.config_dir, config_name, [overrides[i] for i in group_idx[:n]])
            except Exception:
                return group_idx[n - 1]
        return -1


def _cases(tree):
    rng = random.Random(SEED)
    gen = Generator(tree, rng)
    return [gen.case() for _ in range(N_LISTS)]


@pytest.fixture(scope="module")
def corpus(config_cache):
    tree = config_cache.snapshot("ppo_trainer", ("model_engine=megatron",))["tree"]
    return _cases(tree)


@pytest.fixture(scope="module")
def oracle(config_source):
    return HydraOracle(config_source.path)


def _is_value_override(oracle, text, groups) -> bool:
    try:
        o = oracle.parser.parse_override(text)
    except Exception:
        return False
    return not o.is_sweep_override() and not oracle.is_group(o)


def _validator_verdict(cache, name, overrides):
    problems = check_overrides(cache, name, overrides)
    return problems[0].index if problems else None


def test_agrees_with_hydra_on_generated_lists(corpus, oracle, config_cache):
    groups = set(config_cache.groups)
    disagreements = []
    failing = 0
    for name, overrides in corpus:
        expected = oracle.verdict(name, overrides, groups)
        got = _validator_verdict(config_cache, name, overrides)
        failing += expected is not None
        if expected != got:
            disagreements.append((name, overrides, expected, got))
    assert not disagreements, json.dumps(disagreements[:5], indent=1)
    assert len(corpus) >= 2000
    # The corpus exercises both outcomes in earnest.
    assert 0.25 * len(corpus) < failing < 0.85 * len(corpus)


def test_oracle_is_hydra_compose(corpus, oracle, config_source, config_cache):
    """On a sample, the oracle's verdict is exactly hydra.compose's."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    groups = set(config_cache.groups)
    sample = corpus[:: max(1, len(corpus) // N_COMPOSE_SAMPLE)][:N_COMPOSE_SAMPLE]
    ok_seen = fail_seen = 0
    for name, overrides in sample:
        expected = oracle.verdict(name, overrides, groups)
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=config_source.path, version_base=None):
            try:
                compose(config_name=name, overrides=overrides)
                composed_ok = True
            except Exception as err:  # whatever Hydra raises
                composed_ok = False
                message = str(err)
        assert composed_ok == (expected is None), (name, overrides, expected)
        if composed_ok:
            ok_seen += 1
        else:
            fail_seen += 1
            if expected >= 0 and _is_value_override(oracle, overrides[expected], groups):
                key = oracle.parser.parse_override(overrides[expected]).key_or_group
                assert key in message, (overrides, expected, message)
    assert ok_seen and fail_seen


def test_fast_path_and_exact_path_are_both_used(corpus, config_cache, monkeypatch):
    """Guard against a test that cannot fail: most lists take the fast path."""
    from verl_preflight.checks import config as cfgcheck

    calls = {"slow": 0}
    real = cfgcheck.slow_apply

    def counting(*args):
        calls["slow"] += 1
        return real(*args)

    monkeypatch.setattr(cfgcheck, "slow_apply", counting)
    fresh = ConfigCache(config_cache.source, use_disk=False)
    for name, overrides in corpus[:400]:
        check_overrides(fresh, name, overrides)
    assert 0 < calls["slow"] < 300
