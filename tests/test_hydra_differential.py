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
import gc
import json
import os
import random

import pytest

from verl_preflight.hydra_stage import tree as verl_config
from verl_preflight.hydra_stage.check import check_overrides
from verl_preflight.hydra_stage.tree import copy_composed, release_copy

pytestmark = pytest.mark.slow  # the slow tier (make test-slow): real Hydra composing generated override lists

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
        composed = self.compose(config_name, tuple(overrides[i] for i in group_idx))
        if isinstance(composed, str):
            return self._blamed(config_name, overrides, parsed, group_idx, composed)
        cfg = copy_composed(composed)  # == copy.deepcopy(composed): test_copy_composed_is_deepcopy
        try:
            for i, o in enumerate(parsed):
                if i in group_idx:
                    continue
                try:
                    self.apply([o], cfg)
                except Exception:
                    return i
            return None
        finally:
            release_copy(cfg)  # freed now, not by a full garbage collection

    def compose(self, config_name: str, group_overrides: tuple):
        """hydra.compose with these group selections (memoized), or its error message."""
        key = (config_name, group_overrides)
        if key not in self.composed:
            try:
                tree = verl_config.Tree(self.config_dir)
                self.composed[key] = verl_config.compose_raw(tree, config_name, list(group_overrides))
            except Exception as err:
                self.composed[key] = str(err)
        return self.composed[key]

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
            if isinstance(self.compose(config_name, tuple(overrides[i] for i in group_idx[:n])), str):
                return group_idx[n - 1]
        return -1


def _cases(tree):
    rng = random.Random(SEED)
    gen = Generator(tree, rng)
    return [gen.case() for _ in range(N_LISTS)]


@pytest.fixture(scope="module", autouse=True)
def _rare_young_collections():
    """Thousands of config copies (and OmegaConf's error path deep-copies the config too):
    with the default threshold of 700 allocations, every copy outlives a dozen collections
    and its garbage lands in the oldest generation, whose full collections took a third of
    this module's time. Collected every 50,000 allocations instead, most die young."""
    old = gc.get_threshold()
    gc.set_threshold(50_000, *old[1:])
    yield
    gc.set_threshold(*old)


def _fingerprint(cfg):
    """A composition's content and every node's flags, to see that nobody changed it."""
    from omegaconf import OmegaConf

    flags, stack = [], [cfg]
    while stack:
        node = stack.pop()
        flags.append(dict(node._metadata.flags))
        content = node.__dict__.get("_content")
        stack.extend(content.values() if isinstance(content, dict) else content if isinstance(content, list) else ())
    return OmegaConf.to_container(cfg, resolve=False), flags


@pytest.fixture(scope="module", autouse=True)
def _compose_once():
    """The oracle and the validator compose the same (config, group selections) pairs, both with
    verl_config.compose_raw (which test_oracle_is_hydra_compose holds against the public
    hydra.compose): each pair is composed once for both. Both apply overrides to copies only;
    that no composition changed is checked at the end of the module, since a validator that
    changed its compositions would change the oracle's too."""
    memo = {}
    real = verl_config.compose_raw

    def once(tree, config_name, group_overrides):
        key = (tree, config_name, tuple(group_overrides))
        if key not in memo:
            try:
                cfg = real(tree, config_name, list(group_overrides))
                memo[key] = (cfg, None, _fingerprint(cfg))
            except Exception as err:  # Hydra's composition errors, raised again for each caller
                memo[key] = (None, err, None)
        cfg, err, _ = memo[key]
        if err is not None:
            raise err.with_traceback(None)
        return cfg

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(verl_config, "compose_raw", once)
        yield
    changed = [key for key, (cfg, _, before) in memo.items() if cfg is not None and _fingerprint(cfg) != before]
    assert not changed, f"compositions changed by their users: {changed}"


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


# The lists are checked in three interleaved parts (so `pytest -n` can spread them). A local
# `make test` runs the first, a fixed third of the lists; CI (CI=true) and
# VERL_PREFLIGHT_FULL_DIFFERENTIAL=1 run all 2,100.
CHUNKS = 3
FULL = bool(os.environ.get("CI") or os.environ.get("VERL_PREFLIGHT_FULL_DIFFERENTIAL"))


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_agrees_with_hydra_on_generated_lists(corpus, oracle, config_cache, chunk):
    if chunk and not FULL:
        pytest.skip("a fixed third of the lists runs locally; all of them with CI=true")
    groups = set(config_cache.groups)
    disagreements = []
    failing = 0
    assert len(corpus) >= 2000
    corpus = corpus[chunk::CHUNKS]
    for name, overrides in corpus:
        expected = oracle.verdict(name, overrides, groups)
        got = _validator_verdict(config_cache, name, overrides)
        failing += expected is not None
        if expected != got:
            disagreements.append((name, overrides, expected, got))
    assert not disagreements, json.dumps(disagreements[:5], indent=1)
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
    from verl_preflight.hydra_stage import check as cfgcheck

    calls = {"slow": 0}
    real = cfgcheck.slow_apply

    def counting(*args):
        calls["slow"] += 1
        return real(*args)

    monkeypatch.setattr(cfgcheck, "slow_apply", counting)
    # No exact-path verdicts memoized yet; the compositions (which decide nothing here) are shared.
    fresh = config_cache.fork(
        verdicts={},
        snapshots=dict(config_cache.snapshots),
        raw=dict(config_cache.raw),
        parsed=dict(config_cache.parsed),
    )
    for name, overrides in corpus[:400]:
        check_overrides(fresh, name, overrides)
    assert 0 < calls["slow"] < 300


def _copy_difference(original, deep, fast) -> str | None:
    """Where `fast` differs from `deep` = copy.deepcopy(original) as an object graph, or None.

    Same classes and attributes everywhere; what deepcopy shares with the original
    (atomic values, a value node's `_val`, the root's parent) `fast` shares too;
    what deepcopy copies, `fast` copies too (never the original's object) with
    equal content; every parent is the copy's own container."""
    from omegaconf.base import Node

    def same(d, f, o, where):
        if d is o:
            return None if f is o else f"{where}: deepcopy shares it, the fast copy does not"
        if f is o:
            return f"{where}: the fast copy shares the original's object"
        if type(d) is not type(f):
            return f"{where}: {type(d).__name__} != {type(f).__name__}"
        if isinstance(d, Node):
            return None  # nodes are walked by `node`
        if isinstance(d, dict):
            if getattr(d, "default_factory", None) is not getattr(f, "default_factory", None):
                return f"{where}: default_factory"
            if list(d) != list(f) or list(d) != list(o):
                return f"{where}: keys {list(d)} != {list(f)}"
            for k in d:
                bad = same(d[k], f[k], o[k], f"{where}[{k!r}]")
                if bad:
                    return bad
            return None
        if isinstance(d, (list, tuple)):
            if len(d) != len(f):
                return f"{where}: length"
            for n, (a, b, c) in enumerate(zip(d, f, o, strict=True)):
                bad = same(a, b, c, f"{where}[{n}]")
                if bad:
                    return bad
            return None
        if hasattr(d, "__dict__"):
            return same(d.__dict__, f.__dict__, o.__dict__, where)
        return None if d == f else f"{where}: {d!r} != {f!r}"

    def node(o, d, f, d_parent, f_parent, where):
        if type(d) is not type(f):
            return f"{where}: {type(d).__name__} != {type(f).__name__}"
        od, dd, fd = o.__dict__, d.__dict__, f.__dict__
        if set(dd) != set(fd) or set(dd) != set(od):
            return f"{where}: attributes {sorted(dd)} != {sorted(fd)}"
        if d_parent is None:  # the root keeps its parent
            if not (dd["_parent"] is od["_parent"] and fd["_parent"] is od["_parent"]):
                return f"{where}: root parent"
        elif not (dd["_parent"] is d_parent and fd["_parent"] is f_parent):
            return f"{where}: parent"
        for attr in dd:
            if attr == "_parent":
                continue
            if attr == "_content" and isinstance(dd[attr], (dict, list)):
                oc, dc, fc = od[attr], dd[attr], fd[attr]
                if type(dc) is not type(fc) or fc is oc:
                    return f"{where}: content"
                keys = list(dc) if isinstance(dc, dict) else range(len(dc))
                if (list(dc) != list(fc) or list(dc) != list(oc)) if isinstance(dc, dict) else len(dc) != len(fc):
                    return f"{where}: content keys"
                for k in keys:
                    bad = node(oc[k], dc[k], fc[k], d, f, f"{where}.{k}")
                    if bad:
                        return bad
                continue
            bad = same(dd[attr], fd[attr], od[attr], f"{where}:{attr}")
            if bad:
                return bad
        return None

    return node(original, deep, fast, None, None, "<root>")


def test_copy_composed_is_deepcopy(oracle):
    """The oracle's and the exact path's copy of a composition is copy.deepcopy's object graph,
    on every composition the differential used (and the plain ones when run alone)."""
    for name in ("ppo_trainer", "ppo_megatron_trainer"):
        for groups in ((), ("model_engine=megatron",), ("model_engine=dp",)):
            oracle.compose(name, groups)
    configs = [cfg for cfg in oracle.composed.values() if not isinstance(cfg, str)]
    assert len(configs) >= 6
    for cfg in configs:
        bad = _copy_difference(cfg, copy.deepcopy(cfg), copy_composed(cfg))
        assert bad is None, bad
