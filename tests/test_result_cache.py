"""The per-script result cache: a changed input re-checks exactly the scripts that depend on it.

Each case runs the real pipeline twice over a small tree of scripts with a fresh
cache folder, changes one input, and counts which scripts were checked again.
"""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import ROOT, spied_run

from verl_preflight.app.runner import run_files
from verl_preflight.hydra_stage.tree import ConfigCache, ConfigCaches, locate
from verl_preflight.pipeline.validate import Options
from verl_preflight.rules.schema import load_schema
from verl_preflight.store.result_cache import ResultCache

LAUNCH = 'python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "${A[@]}" "$@"\n'


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "lib.sh").write_text("A=(trainer.total_epochs=2)\n")
    (tmp_path / "uses_lib.sh").write_text("#!/usr/bin/env bash\nsource ./lib.sh\n" + LAUNCH)
    (tmp_path / "alone.sh").write_text("#!/usr/bin/env bash\nA=(trainer.total_epochs=3)\n" + LAUNCH)
    monkeypatch.chdir(tmp_path)
    return tmp_path


class Run:
    """One validator run over the tree: which scripts were checked (not taken from the cache)."""

    def __init__(self, source=None, **options):
        self.source = source or locate(None)
        self.options = options

    def __call__(self, files):
        opts = Options(schema=load_schema(self.options.pop("schema", None)), **self.options)
        caches = ConfigCaches(ConfigCache(self.source, use_disk=True))
        results_cache = ResultCache(self.source, caches.main.digest, opts)
        before = results_cache.hits
        results, _ = run_files(files, caches, opts, 1, results_cache)
        self.checked = len(files) - (results_cache.hits - before)
        return results


FILES = ["uses_lib.sh", "alone.sh"]


def _entries(tree) -> list[str]:
    """The results' entries (not the lists of sources they share: a kind of their own)."""
    folder = tree / "cache" / "verl-preflight" / "results"
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs)


def checked(**options) -> int:
    run = Run(**options)
    run(FILES)
    return run.checked


def test_an_unchanged_tree_is_not_checked_again(tree):
    assert checked() == 2
    assert checked() == 0


def test_editing_a_sourced_file_rechecks_only_its_users(tree):
    checked()
    (tree / "lib.sh").write_text("A=(trainer.total_epochs=5)\n")
    assert checked() == 1
    assert checked() == 0


def test_a_cached_result_is_the_same_result(tree):
    first = Run()(FILES)
    second = Run()(FILES)
    assert [(r.path, r.findings, [p.profile for p in r.profiles]) for r in first] == [
        (r.path, r.findings, [p.profile for p in r.profiles]) for r in second
    ]


def test_an_option_the_stack_or_the_schema_rechecks_everything(tree):
    checked()
    assert checked(max_profiles=8) == 2
    assert checked(stack={"megatron-core": "0.18.0"}) == 2
    schema = tree / "policy.yaml"
    schema.write_text("extends: default\nversion: 1\npolicies: []\n")
    assert checked(schema=str(schema)) == 2
    assert checked(schema=str(schema)) == 0
    schema.write_text("extends: default\nversion: 1\npolicies:\n  - {id: parallelism, severity: warning}\n")
    assert checked(schema=str(schema)) == 2


def test_another_config_tree_rechecks_everything(tree):
    checked()
    copy = tree / "config"
    shutil.copytree(locate(None).path, copy)
    assert checked(source=locate(str(copy))) == 2
    assert checked(source=locate(str(copy))) == 0
    with open(copy / "ppo_trainer.yaml", "a", encoding="utf-8") as fh:
        fh.write("\n# touched\n")
    assert checked(source=locate(str(copy))) == 2


def test_a_corrupt_or_foreign_cache_is_rebuilt(tree):
    checked()
    entries = _entries(tree)
    assert len(entries) == 2
    with open(entries[0], "wb") as fh:
        fh.write(b"\x80\x04not a pickle")
    with open(entries[1], "wb") as fh:
        import pickle

        pickle.dump({"format": 1, "key": "someone else's", "deps": {}, "result": None}, fh)
    assert checked() == 2
    assert checked() == 0


def test_profile_current_is_never_cached(tree):
    assert checked(current=True) == 2
    assert checked(current=True) == 2


def test_the_cli_gives_the_same_output_warm(tree, capsys):
    from verl_preflight.app.cli import main

    example = os.path.join(ROOT, "examples", "grpo_trainer", "run_qwen3_5_35b_megatron.sh")
    main(["--format", "json", example, *FILES])
    cold = capsys.readouterr().out
    main(["--format", "json", example, *FILES])
    assert capsys.readouterr().out == cold


@pytest.mark.slow
def test_a_fully_warm_run_loads_neither_hydra_nor_the_composition_cache(tree):
    """An unchanged tree: every result from the cache, so nothing of Hydra or OmegaConf is
    imported and the compositions kept on disk are not read (interpreter start-up and the
    result cache are all a warm run costs)."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tree / "cache"))
    first, _, loaded = spied_run(["--format", "json", *FILES], env=env)
    assert loaded  # the cold run composes
    warm, opened, loaded = spied_run(["--format", "json", *FILES], env=env)
    assert loaded == []
    compositions = os.path.join(str(tree / "cache"), "verl-preflight", "compositions")
    assert not [p for p in opened if p.startswith(compositions) and p.endswith(".json")]
    assert warm.stdout == first.stdout


# ---- a cache others could have written (issue 24, item 1) -------------------------------


def test_a_pickle_in_the_cache_is_never_loaded(tree):
    """A cache entry that would run code when unpickled is a miss: nothing of it runs."""
    import pickle

    checked()
    marker = tree / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    folders = [tree / "cache" / "verl-preflight" / kind for kind in ("results", "sources")]  # the sources lists too
    for entry in [os.path.join(d, f) for folder in folders for d, _, fs in os.walk(folder) for f in fs]:
        with open(entry, "wb") as fh:
            pickle.dump({"format": 1, "result": Payload()}, fh)
    assert checked() == 2
    assert not marker.exists()
    assert checked() == 0


def test_every_flipped_bit_is_a_miss(tree):
    """40 single-bit flips over an entry (tag, JSON, result): each is a miss, never another report."""
    opts = Options(schema=load_schema(None))
    source = locate(None)
    checked()
    entry = _entries(tree)[0]
    original = open(entry, "rb").read()
    cache = ResultCache(source, ConfigCache(source, use_disk=True).digest, opts)
    from verl_preflight.store import queries

    path = next(p for p in FILES if queries.entry_path("results", (cache.key, os.path.abspath(p))) == entry)
    assert cache.get(path) is not None
    misses = 0
    for n in range(40):
        bit = (n * 7919 * 8 + n) % (len(original) * 8)
        flipped = bytearray(original)
        flipped[bit // 8] ^= 1 << (bit % 8)
        with open(entry, "wb") as fh:
            fh.write(flipped)
        misses += cache.get(path) is None
    assert misses == 40


def test_an_entry_reads_back_as_json_loads_reads_it_and_is_one_document_or_a_miss(tree):
    """cache_files reads an entry with json's C scanner (no `json` import on a warm start): the
    same values json.loads gives, NaN and the infinities too; a signed payload that is not one
    compact JSON document is a miss, never an error."""
    import json
    import math

    from verl_preflight.store import cache_files

    document = {"s": 'é\u202e\x00"\\', "n": [0, -1, 2.5, 1e300, 10**30], "b": [True, False, None], "e": {}, "l": [[]]}
    path = str(tree / "entry.json")
    assert cache_files.write(path, {**document, "nan": float("nan"), "inf": [float("inf"), float("-inf")]})
    back = cache_files.read(path)
    assert {k: v for k, v in back.items() if k not in ("nan", "inf")} == document
    assert math.isnan(back["nan"]) and back["inf"] == [float("inf"), float("-inf")]
    with open(path, "rb") as fh:
        assert back.keys() == json.loads(fh.read().partition(b"\n")[2]).keys()
    key = cache_files._key()
    for payload in (b'{"a":1} x', b' {"a":1}', b'{"a":1}{}', b"", b"nope", b'{"a":'):
        with open(path, "wb") as fh:
            fh.write(cache_files._tag(key, payload) + b"\n" + payload)
        assert cache_files.read(path) is None, payload


def test_an_entry_signed_with_another_key_is_a_miss(tree):
    """A cache restored from another user's or job's folder, without its key: every entry is a miss."""
    checked()
    key = tree / "cache" / "verl-preflight" / "key"
    os.rename(key, tree / "their-key")
    from verl_preflight.store import cache_files

    cache_files._key_in.cache_clear()
    try:
        assert checked() == 2
    finally:
        cache_files._key_in.cache_clear()


def test_cache_folders_are_private_whatever_the_umask(tree):
    old = os.umask(0o002)
    try:
        base = tree / "cache" / "verl-preflight"
        base.mkdir(parents=True)
        os.chmod(base, 0o775)  # made earlier by a group-writable umask
        from verl_preflight.store import cache_files

        cache_files._usable.cache_clear()
        checked()
    finally:
        os.umask(old)
    for dirpath, dirnames, filenames in os.walk(base):
        assert oct(os.stat(dirpath).st_mode & 0o777) == oct(0o700), dirpath
        for name in filenames:
            assert oct(os.stat(os.path.join(dirpath, name)).st_mode & 0o777) == oct(0o600), name


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a folder away")
def test_a_cache_folder_of_another_user_is_not_used(tree, capsys):
    from verl_preflight.app.cli import main
    from verl_preflight.store import cache_files

    base = tree / "cache" / "verl-preflight"
    base.mkdir(parents=True)
    os.chown(base, 65534, 65534)
    cache_files._usable.cache_clear()
    try:
        assert main(["--format", "json", *FILES]) == 0
        assert os.listdir(base) == []
        assert "belongs to another user" in capsys.readouterr().err
    finally:
        cache_files._usable.cache_clear()


# ---- every input of a result is in its key (issue 24, item 2) -----------------------------


def _cli(tree, *argv, cwd=None) -> str:
    import subprocess
    import sys

    env = dict(os.environ, XDG_CACHE_HOME=str(tree / "cache"))
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "validate_scripts.py"), "--format", "json", *argv],
        capture_output=True, text=True, env=env, cwd=cwd or tree,
    )
    assert proc.returncode in (0, 1), proc.stderr
    import json

    return [(f["rule"], f["message"]) for f in json.loads(proc.stdout)["findings"]]


@pytest.mark.slow
def test_an_edited_model_config_rechecks(tree):
    import json

    model = tree / "model"
    model.mkdir()
    shape = json.load(open(os.path.join(ROOT, "tests", "fixtures", "models", "tiny-moe", "config.json")))
    (model / "config.json").write_text(json.dumps(shape))
    (tree / "ep.sh").write_text(
        "#!/usr/bin/env bash\nA=(model_engine=megatron actor_rollout_ref.model.path=/models/my-finetune "
        "actor_rollout_ref.actor.megatron.use_mbridge=True trainer.nnodes=1 trainer.n_gpus_per_node=8 "
        "actor_rollout_ref.actor.megatron.expert_model_parallel_size=8)\n" + LAUNCH
    )
    first = _cli(tree, "--model-config", str(model), "ep.sh")
    assert any("experts are not divisible by EP=8" in m for r, m in first if r == "model-shape")
    shape["num_experts"] = 64
    (model / "config.json").write_text(json.dumps(shape))
    again = _cli(tree, "--model-config", str(model), "ep.sh")
    assert not any(r == "model-shape" for r, _ in again)


@pytest.mark.slow
def test_an_edited_verl_source_rechecks(tree):
    """A name registered in verl's Python (not its YAML): the cached result must not outlive the edit."""
    verl = tree / "verl"
    shutil.copytree(locate(None).package_root, verl, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "est.sh").write_text("#!/usr/bin/env bash\nA=(algorithm.adv_estimator=gpro)\n" + LAUNCH)
    config = str(verl / "trainer" / "config")
    assert ("config-value" in {r for r, _ in _cli(tree, "--verl-config", config, "est.sh")})
    with open(verl / "trainer" / "ppo" / "core_algos.py", "a", encoding="utf-8") as fh:
        fh.write('\n\n@register_adv_est("gpro")\ndef compute_gpro_outcome_advantage(*args, **kwargs):\n    return None\n')
    assert "config-value" not in {r for r, _ in _cli(tree, "--verl-config", config, "est.sh")}


@pytest.mark.slow
def test_a_verl_put_beside_the_script_later_rechecks(tree):
    """`python3 -m verl...` from a project that holds a verl/ runs that one: a copy put there
    after the script was checked (its config has a key the installed one lacks) is the one
    checked next time."""
    (tree / ".git").mkdir()  # the project's root: the search for a vendored verl stops here
    (tree / "typo.sh").write_text("#!/usr/bin/env bash\nA=(+trainer.total_epoch=3)\n" + LAUNCH)
    before = _cli(tree, "typo.sh")
    assert "override-append-existing" not in {r for r, _ in before}
    config = tree / "verl" / "trainer" / "config"
    shutil.copytree(locate(None).path, config)
    (tree / "verl" / "__init__.py").write_text("")  # a package: what `import verl` there loads
    root = config / "ppo_trainer.yaml"
    root.write_text(root.read_text().replace("trainer:\n", "trainer:\n  total_epoch: 1\n", 1))
    after = _cli(tree, "typo.sh")
    assert "override-append-existing" in {r for r, _ in after}  # `+` on a key the copy has
    assert after == _cli(tree, "--no-cache", "typo.sh")


@pytest.mark.slow
def test_a_relative_source_is_resolved_from_this_run(tree):
    """The same script, run from two folders whose ./settings.sh differ: each gets its own result."""
    for name, key in (("a", "total_epochs"), ("b", "total_epoch")):
        (tree / name).mkdir()
        (tree / name / "settings.sh").write_text(f"A=(trainer.{key}=2)\n")
    (tree / "scripts").mkdir()
    (tree / "scripts" / "run.sh").write_text("#!/usr/bin/env bash\nsource ./settings.sh\n" + LAUNCH)
    script = str(tree / "scripts" / "run.sh")
    assert _cli(tree, script, cwd=tree / "a") == []
    assert any(r == "override-missing-key" for r, _ in _cli(tree, script, cwd=tree / "b"))
    assert _cli(tree, script, cwd=tree / "a") == []


@pytest.mark.slow
def test_a_result_is_spelled_as_this_run_names_the_script(tree):
    """Warm or cold, each spelling of the path gets the report a run without the cache gives."""
    import subprocess
    import sys

    (tree / "bad.sh").write_text("#!/usr/bin/env bash\nA=(trainer.total_epoch=2)\n" + LAUNCH)
    (tree / "sub").mkdir()
    env = dict(os.environ, XDG_CACHE_HOME=str(tree / "cache"))

    def run(spelled, cwd, *extra):
        argv = [sys.executable, os.path.join(ROOT, "tools", "validate_scripts.py"), *extra, spelled]
        return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd).stdout

    for spelled, cwd in (("bad.sh", tree), ("./bad.sh", tree), (str(tree / "bad.sh"), tree), ("../bad.sh", tree / "sub")):
        assert run(spelled, cwd).split("(")[0] == run(spelled, cwd, "--no-cache").split("(")[0]
        assert "bad.sh:2:" in run(spelled, cwd)


def test_plain_entries_build_only_the_tools_own_data():
    from verl_preflight.core.values import OTHER, Loc
    from verl_preflight.store.plain import NotPlain, from_plain, to_plain

    value = {"a": (1, [2.5, None]), (1, 2): {frozenset({"x"})}, "o": OTHER, "loc": Loc("s.sh", 3, 4)}
    assert from_plain(to_plain(value)) == value
    assert from_plain(to_plain(value))["o"] is OTHER
    shared = to_plain([Loc("s.sh", 1, 1), Loc("s.sh", 1, 1), Loc("s.sh", 1, 1.0)])
    assert len(shared["objects"]) == 2  # equal objects written once; 1 and 1.0 are not equal here
    assert [type(x.col) for x in from_plain(shared)] == [int, int, float]
    for classes, entry in (
        (["os:system"], [0]),
        (["values:Loc"], [0, "s.sh"]),  # fields missing
        (["values:Loc"], [0, "s.sh", 1, 1, "extra"]),
        (["values:Loc"], [1, "s.sh", 1, 1]),  # no such class index
        (["../os:path"], [0]),
        (["plain:NotPlain"], [0]),  # the package's, but not a dataclass
    ):
        with pytest.raises(NotPlain):
            from_plain({"classes": classes, "objects": [entry], "root": {"r": 0}})
    for root in ({"o": "values:__builtins__"}, {"s": [[1]]}, {"x": []}, {"r": 0}, {"r": -1}):
        with pytest.raises(NotPlain):
            from_plain({"classes": [], "objects": [], "root": root})
    with pytest.raises(NotPlain):  # a reference forward (or to itself): no cycles, nothing half-built
        from_plain({"classes": ["values:Loc"], "objects": [[0, {"r": 0}, 1, 1]], "root": {"r": 0}})
    with pytest.raises(NotPlain):
        to_plain(object())


def _kept_fact(root, derive):
    """(fact, its calls, new_run): `derive` of a folder kept with derived.kept; new_run() stands
    for the next run of the tool (a new session: its memos and what it read forgotten)."""
    from verl_preflight.store import derived, session

    calls = []

    @derived.kept
    def fact(path: str) -> tuple:
        calls.append(path)
        return derive(path)

    def new_run():
        session.begin()

    return fact, calls, new_run


def test_a_fact_kept_with_the_files_it_reads_follows_those_files_and_no_others(tree):
    """derived.kept_reading: the fact records only the files it names (a module's outline: its
    own file), not every source read before it in the session; it is derived again when one of
    them changes or appears, and a change to another source leaves it kept."""
    from verl_preflight.store import dependencies
    from verl_preflight.store import derived, session

    root = tree / "pkg"
    root.mkdir()
    (root / "mod.py").write_text("LIMIT = 1\n")
    (root / "other.py").write_text("X = 1\n")
    calls = []

    @derived.kept_reading(lambda path: (os.path.join(path, "mod.py"), os.path.join(path, "missing.py")))
    def fact(path: str) -> tuple:
        calls.append(path)
        return (dependencies.read_source(os.path.join(path, "mod.py")).strip(),)

    def new_run():
        session.begin()

    dependencies.read_source(str(root / "other.py"))  # read before it: not one of its sources
    assert fact(str(root)) == ("LIMIT = 1",) and len(calls) == 1
    new_run()
    (root / "other.py").write_text("X = 2\n")
    assert fact(str(root)) == ("LIMIT = 1",) and len(calls) == 1  # kept: other.py is not its source
    assert str(root / "mod.py") in dependencies.reads()  # loading it records what it read
    assert str(root / "other.py") not in dependencies.reads()
    new_run()
    (root / "mod.py").write_text("LIMIT = 2\n")
    assert fact(str(root)) == ("LIMIT = 2",) and len(calls) == 2
    new_run()
    (root / "missing.py").write_text("")  # a file it named appears
    assert fact(str(root)) == ("LIMIT = 2",) and len(calls) == 3


def test_facts_derived_from_sources_are_kept_while_the_sources_are_unchanged(tree):
    """derived.kept: a fact read from a release's sources is computed once per machine and
    computed again when a file it relied on changes (each call below stands for a new run)."""
    from verl_preflight.store import dependencies

    root = tree / "pkg"
    root.mkdir()
    (root / "mod.py").write_text("LIMIT = 1\n")
    limit, calls, new_run = _kept_fact(root, lambda path: (dependencies.read_source(os.path.join(path, "mod.py")).strip(),))

    assert limit(str(root)) == ("LIMIT = 1",) and len(calls) == 1
    new_run()
    assert limit(str(root)) == ("LIMIT = 1",) and len(calls) == 1  # from the cache
    assert str(root / "mod.py") in dependencies.reads()  # a result still depends on the file
    (root / "mod.py").write_text("LIMIT = 2\n")
    new_run()
    assert limit(str(root)) == ("LIMIT = 2",) and len(calls) == 2


def _key_after(barrier, out, i):
    from verl_preflight.store import cache_files

    barrier.wait()
    key = cache_files._key()
    out[i] = key.hex() if key else ""


def test_runs_starting_together_on_an_empty_cache_read_one_whole_key(tree):
    """The key is written whole and then linked into place: no run reads a key being written
    (which would be no key: that run without a cache) or makes a second one."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(6), ctx.Manager().dict()
    procs = [ctx.Process(target=_key_after, args=(barrier, out, i)) for i in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    keys = set(out.values())
    assert len(out) == 6 and len(keys) == 1 and "" not in keys
    assert os.listdir(tree / "cache" / "verl-preflight") == ["key"]  # no temporary file left


def test_the_sources_entry_follows_what_the_session_reads(tree):
    """dependencies.sources_entry is computed again only when the session read a source it had not, and
    then names and digests what was read (a memo that missed a source would give a result a stale
    dependency); a new session (a source changed: the language server begins one) starts anew."""
    from verl_preflight.store import dependencies
    from verl_preflight.store import session

    (tree / "a.py").write_text("A = 1\n")
    (tree / "b.py").write_text("B = 1\n")
    dependencies.read_source(str(tree / "a.py"))
    first = dependencies.sources_entry()
    assert first is dependencies.sources_entry()  # unchanged: the same entry, not computed again
    assert first[0] == dependencies.sources_dependency() and first[1] == dependencies.sources_digest(first[0])
    dependencies.read_source(str(tree / "a.py"))  # the same source read again: the same entry
    assert dependencies.sources_entry() is first
    dependencies.read_source(str(tree / "b.py"))  # a new file read
    second = dependencies.sources_entry()
    assert str(tree / "b.py") in second[0] and second != first
    assert second[1] == dependencies.sources_digest(second[0])
    (tree / "b.py").write_text("B = 2\n")
    assert dependencies.sources_changed()
    session.begin()
    dependencies.read_source(str(tree / "b.py"))
    third = dependencies.sources_entry()
    assert str(tree / "a.py") not in third[0] and third[1] == dependencies.sources_digest(third[0])


def test_a_fact_derived_from_every_module_of_a_tree_is_derived_again_when_a_module_is_added(tree):
    """A fact that walks a tree's modules (the registries, the truth-tested keys...) depends on
    which files the tree holds: a module added (a user's own registration in an editable verl)
    makes it derived again, though no file it read changed."""
    from verl_preflight.store import dependencies

    root = tree / "pkg"
    root.mkdir()
    (root / "a.py").write_text("A = 1\n")
    modules, calls, new_run = _kept_fact(root, lambda path: tuple(os.path.basename(p) for p in dependencies.python_files(path)))

    assert modules(str(root)) == ("a.py",) and len(calls) == 1
    new_run()
    assert modules(str(root)) == ("a.py",) and len(calls) == 1  # from the cache
    (root / "b.py").write_text("B = 1\n")
    new_run()
    assert modules(str(root)) == ("a.py", "b.py") and len(calls) == 2
    new_run()
    (root / "b.py").unlink()
    assert modules(str(root)) == ("a.py",) and len(calls) == 3
    new_run()


_REJECTS_RUN = """
import json, sys
from verl_preflight.store import dependencies
from verl_preflight.sources import verl_types
if sys.argv[1:]:
    verl_types.hydra_versions = lambda: sys.argv[1]
before = dict(dependencies.reads())
answers = [verl_types.rejects(verl_types.ScalarType("int", False), v) for v in ("two", "8", 1.5)]
print(json.dumps([answers, "omegaconf" in sys.modules, dependencies.reads() == before]))
"""


def test_omegaconfs_answer_on_a_value_is_kept_by_its_versions_and_read_without_importing_it(tree):
    """derived.kept_by_arguments: whether OmegaConf converts a value to a field's type is run once
    a machine for the hydra-core and omegaconf installed; the next run reads the answer without
    importing OmegaConf and without making a result depend on any source; other versions run it again."""
    import json
    import subprocess
    import sys

    def run(*versions):
        proc = subprocess.run([sys.executable, "-c", _REJECTS_RUN, *versions], capture_output=True, text=True, check=True)
        return json.loads(proc.stdout)

    first, second, other = run(), run(), run("hydra=0.0,omegaconf=0.0")
    assert first[0][0] and first[0][1] is None and first[0][2]  # "two" and 1.5 are not integers, "8" is
    assert first[1] is True and first[2] is True  # computed: OmegaConf imported
    assert second == [first[0], False, True]  # read back: the same answers, OmegaConf never imported
    assert other == [first[0], True, True]  # another omegaconf: asked again


def _fresh_digests(monkeypatch):
    from verl_preflight.store import cache_files, file_digests

    monkeypatch.setattr(file_digests, "_table", None)
    monkeypatch.setattr(file_digests, "_added", False)
    monkeypatch.setattr(cache_files, "_on_disk", [True])
    return file_digests


def test_a_files_digest_is_kept_and_read_again_whenever_stat_says_it_may_have_changed(tree, monkeypatch):
    import hashlib
    import time

    digests = _fresh_digests(monkeypatch)
    path = tree / "settled.txt"
    path.write_bytes(b"one\n")
    old = time.time_ns() - 3_600_000_000_000
    os.utime(path, ns=(old, old))
    # young files are never kept (module doc): this one is written now, so the test moves the
    # clock the module reads past the settling time instead of waiting for it
    later = time.time_ns() + 10 * digests.SETTLED_NS
    monkeypatch.setattr(digests.time, "time_ns", lambda: later)
    assert digests.file_digest(str(path)) == hashlib.sha256(b"one\n").hexdigest()
    assert str(path) in digests._table

    def no_hashing(*_):
        raise AssertionError("hashed a file whose stat is unchanged")

    one, sha256 = hashlib.sha256(b"one\n").hexdigest(), hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", no_hashing)
    assert digests.file_digest(str(path)) == one  # kept, not read
    monkeypatch.setattr(hashlib, "sha256", sha256)
    digests.save()
    monkeypatch.setattr(digests, "_table", None)  # a new run reads the table from the cache folder
    assert str(path) in digests._load()

    path.write_bytes(b"two\n")  # in place, the same size, another modification time
    os.utime(path, ns=(old + 1, old + 1))
    assert digests.file_digest(str(path)) == hashlib.sha256(b"two\n").hexdigest()
    fresh = tree / "replacement.txt"  # replaced by another file (a new inode), same size and times
    fresh.write_bytes(b"six\n")
    os.utime(fresh, ns=(old + 1, old + 1))
    os.replace(fresh, path)
    assert digests.file_digest(str(path)) == hashlib.sha256(b"six\n").hexdigest()
    path.write_bytes(b"longer\n")
    os.utime(path, ns=(old + 1, old + 1))
    assert digests.file_digest(str(path)) == hashlib.sha256(b"longer\n").hexdigest()
    os.unlink(path)
    assert digests.file_digest(str(path)) is None


def test_a_young_file_is_hashed_every_time_and_no_cache_keeps_no_table(tree, monkeypatch):
    digests = _fresh_digests(monkeypatch)
    path = tree / "young.txt"
    path.write_bytes(b"now\n")
    assert digests.file_digest(str(path)) is not None
    assert str(path) not in digests._table  # written within the settling time: not kept
    table = tree / "cache" / "verl-preflight" / "digests.json"
    monkeypatch.setattr(digests.time, "time_ns", lambda: 2**62)
    from verl_preflight.store import cache_files

    cache_files.use_disk(False)  # (the list _fresh_digests put in place: put back after the test)
    monkeypatch.setattr(digests, "_table", None)
    assert digests.file_digest(str(path)) is not None
    digests.save()
    assert not table.exists()
    cache_files.use_disk(True)
    digests.save()
    assert table.exists()


def _settled_clock(digests, monkeypatch):
    """The clock the module reads moved past the settling time (files written now count as settled)."""
    import time

    later = time.time_ns() + 10 * digests.SETTLED_NS
    monkeypatch.setattr(digests.time, "time_ns", lambda: later)


def test_a_missing_files_absence_is_kept_while_the_folder_above_it_is_unchanged(tree, monkeypatch):
    """The checks depend on hundreds of files that are not there (where an import could be
    found): the absence is kept with the stamp of the nearest folder that is there, and no
    open is tried while it is unchanged; a name added below it is seen at once."""
    import hashlib

    digests = _fresh_digests(monkeypatch)
    _settled_clock(digests, monkeypatch)
    (tree / "pkg").mkdir()
    module = tree / "pkg" / "sub" / "mod.py"  # its folder `sub` is missing too
    assert digests.file_digest(str(module)) is None
    assert digests._table[str(module)][5:] == [None, str(tree / "pkg")]

    def no_open(*_):
        raise AssertionError("opened a file whose absence is kept")

    monkeypatch.setattr(digests, "open", no_open, raising=False)
    assert digests.file_digest(str(module)) is None
    digests.save()
    monkeypatch.setattr(digests, "_table", None)  # a new run reads the kept absence back
    assert digests.file_digest(str(module)) is None
    monkeypatch.delattr(digests, "open")

    (tree / "pkg" / "sub").mkdir()  # a write to pkg: the kept absence no longer holds
    assert digests.file_digest(str(module)) is None
    assert digests._table[str(module)][5:] == [None, str(tree / "pkg" / "sub")]
    module.write_bytes(b"x = 1\n")
    assert digests.file_digest(str(module)) == hashlib.sha256(b"x = 1\n").hexdigest()
    module.unlink()
    assert digests.file_digest(str(module)) is None


def test_no_absence_is_kept_where_a_link_to_nothing_could_bring_the_file(tree, monkeypatch):
    """A missing file behind a link whose target is not there (the leaf, or a folder on the way:
    `common -> ../shared/common`, not cloned yet) is not kept as missing: its target can appear
    without a write to the folder that holds the link. Seen at once when it appears."""
    import hashlib

    digests = _fresh_digests(monkeypatch)
    _settled_clock(digests, monkeypatch)
    (tree / "proj").mkdir()
    (tree / "proj" / "env.sh").symlink_to(tree / "shared" / "env.sh")
    (tree / "proj" / "common").symlink_to(tree / "shared" / "common")
    leaf, below = tree / "proj" / "env.sh", tree / "proj" / "common" / "env.sh"
    for path in (leaf, below):
        assert digests.file_digest(str(path)) is None
        assert str(path) not in digests._table
    from verl_preflight.core.script_reader import Recorder
    from verl_preflight.store import dependencies
    from verl_preflight.store.dependencies import read_source

    try:
        assert Recorder()(str(below)) is None and read_source(str(below)) is None
        assert str(below) not in digests._table
        (tree / "shared" / "common").mkdir(parents=True)
        for path in (tree / "shared" / "env.sh", tree / "shared" / "common" / "env.sh"):
            path.write_bytes(b"X=1\n")
        assert digests.file_digest(str(leaf)) == digests.file_digest(str(below)) == hashlib.sha256(b"X=1\n").hexdigest()
    finally:  # the process's record of sources read: this test's file is no later test's source
        dependencies.reads().pop(os.path.abspath(str(below)), None)


def test_no_listing_is_kept_where_a_walk_met_a_link_or_a_folder_it_could_not_read(tree, monkeypatch):
    """A listing rests on the stamps of the folders its walk read; a link met in the walk (its
    target can change kind: a folder named x.py becomes a file) or a folder it could not read (a
    chmod changes only that folder's stamp) is not covered by them: such a listing is not kept."""
    from verl_preflight.store import dependencies

    digests = _fresh_digests(monkeypatch)
    _settled_clock(digests, monkeypatch)
    top = tree / "verl"
    top.mkdir()
    (top / "a.py").write_text("")
    (tree / "elsewhere").mkdir()
    (top / "x.py").symlink_to(tree / "elsewhere")  # a link to a folder: not listed, not walked
    listing = dependencies.LISTING + str(top)
    first = dependencies.digest_of(listing)
    assert digests.LISTED + str(top) not in digests._table
    (tree / "elsewhere").rmdir()
    (tree / "elsewhere").write_text("")  # its target a file now: x.py is listed
    assert dependencies.digest_of(listing) != first
    (top / "x.py").unlink()
    folders: list = []
    dependencies._python_files(str(top), folders)
    assert None not in folders  # no link left: this walk's listing is kept
    monkeypatch.setattr(dependencies.os, "walk", lambda top, onerror=None: _unreadable_walk(top, onerror))
    folders = []
    dependencies._python_files(str(top), folders)
    assert None in folders  # a folder the walk could not read


def _unreadable_walk(top, onerror):
    """os.walk's way with a folder it cannot read (root is not refused by a chmod)."""
    onerror(PermissionError(13, "Permission denied", os.path.join(top, "locked")))
    yield top, [], ["a.py"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_check_keeps_the_digest_of_every_file_it_read_in_a_worker_too(tree, monkeypatch, jobs):
    """What a check reads (the scripts, the files they source or look for and miss) is kept
    with its stamp as it is read, in -j workers too (handed to the parent, which saves the
    table): the first warm run after a cold one hashes nothing again. (verl's sources, which
    this process may have read before the test: test_command_memo's warm start, which writes
    nothing.)"""
    digests = _fresh_digests(monkeypatch)
    _settled_clock(digests, monkeypatch)  # (the workers are forked: they read the same clock)
    names = [f"s{i}.sh" for i in range(8)]  # runner.SERIAL_BELOW scripts: workers with -j 2
    for name in names:
        (tree / name).write_text("#!/usr/bin/env bash\nsource ./missing.sh\nA=(trainer.total_epochs=3)\n" + LAUNCH)
    opts = Options(schema=load_schema(None))
    source = locate(None)
    caches = ConfigCaches(ConfigCache(source, use_disk=True))
    run_files(names, caches, opts, jobs, ResultCache(source, caches.main.digest, opts))
    table = digests._table
    assert all(isinstance(table.get(str(tree / n)), list) and table[str(tree / n)][5] for n in names)
    assert table[str(tree / "missing.sh")][5:] == [None, str(tree)]


def test_a_folders_listing_is_kept_while_no_folder_its_walk_read_changed(tree, monkeypatch):
    """Which .py files are below a folder (a dependencies.LISTING dependency, verl's hundreds of
    modules) is walked again only when one of the folders the walk read has changed."""
    from verl_preflight.store import dependencies

    digests = _fresh_digests(monkeypatch)
    _settled_clock(digests, monkeypatch)
    top = tree / "verl"
    (top / "workers").mkdir(parents=True)
    (top / "__init__.py").write_text("")
    (top / "workers" / "actor.py").write_text("")
    listing = dependencies.LISTING + str(top)
    first = dependencies.digest_of(listing)
    assert first == dependencies._listing_digest(str(top), dependencies._python_files(str(top)))

    def no_walk(_):
        raise AssertionError("walked a folder whose listing is kept")

    walked = dependencies._walked
    monkeypatch.setattr(dependencies, "_walked", no_walk)
    assert dependencies.digest_of(listing) == first
    digests.save()
    monkeypatch.setattr(digests, "_table", None)  # a new run reads the kept listing back
    assert dependencies.digest_of(listing) == first
    monkeypatch.setattr(dependencies, "_walked", walked)
    (top / "workers" / "critic.py").write_text("")  # a module added one folder down
    second = dependencies.digest_of(listing)
    assert second != first
    (top / "workers" / "engine").mkdir()
    (top / "workers" / "engine" / "base.py").write_text("")  # in a new folder
    assert dependencies.digest_of(listing) not in (first, second)
    (top / "workers" / "engine" / "base.py").unlink()
    (top / "workers" / "engine").rmdir()
    (top / "workers" / "critic.py").unlink()
    assert dependencies.digest_of(listing) == first
    (top / "workers" / "notes.txt").write_text("")  # not a module: the same listing
    assert dependencies.digest_of(listing) == first


def test_the_projects_settings_are_kept_by_the_bytes_of_its_pyproject(tree, monkeypatch):
    from verl_preflight.app import settings

    (tree / "pyproject.toml").write_text('[tool.validate-scripts]\npaths = ["a"]\nseverity = {escaped-blank = "off"}\n')
    first = settings.project_settings(str(tree))
    assert first["paths"] == ["a"] and first["severity"] == {"escaped-blank": "off"}

    def unparsed(_):
        raise AssertionError("parsed a pyproject.toml whose table is kept")

    parsed = settings._parsed
    monkeypatch.setattr(settings, "_parsed", unparsed)
    assert settings.project_settings(str(tree)) == first
    monkeypatch.setattr(settings, "_parsed", parsed)
    (tree / "pyproject.toml").write_text('[tool.validate-scripts]\npaths = ["b"]\n')
    assert settings.project_settings(str(tree))["paths"] == ["b"]
    (tree / "pyproject.toml").write_text("[tool.validate-scripts]\npaths = [\"c\"]\nwhen = 2026-12-02\n")
    assert settings.project_settings(str(tree))["paths"] == ["c"]  # a TOML date: read, not kept
    monkeypatch.setattr(settings, "_parsed", unparsed)
    with pytest.raises(AssertionError):
        settings.project_settings(str(tree))
    (tree / "pyproject.toml").write_text('[tool.validate-scripts]\npaths = ["b"]\n')  # kept above
    assert settings.project_settings(str(tree))["paths"] == ["b"]
    with pytest.raises(AssertionError):  # --no-cache: parsed, the kept table not read
        settings.project_settings(str(tree), use_disk=False)


_PARSES = """
import json, sys
from verl_preflight.app import cli
from verl_preflight.sources import _pyast
from verl_preflight.store import released
released.fact = lambda *_: None  # (the disk cache is what is checked: no table shipped for a release)
parse_file = _pyast.parse_file.__wrapped__
seen = []
def recording(path):
    seen.append(path)
    return parse_file(path)
_pyast.parse_file = recording
for name, module in list(sys.modules.items()):
    if name.startswith("verl_preflight.sources.") and getattr(module, "parse_file", None) is not None:
        module.parse_file = recording
for argv in json.loads(sys.argv[1]):
    cli.main(argv)
sys.stderr.write("PARSED " + " ".join(seen) + "\\n")
"""


def test_verls_engine_and_megatrons_schedule_are_run_from_kept_spans_with_the_same_findings(tree):
    """The vLLM engine's code (verl_lengths.EngineCode) and Megatron-Core's schedules are kept
    as spans: a second process parses neither module and reports the same findings (the
    engine's from the installed verl, the schedule's through verl 0.7.0's Megatron workers)."""
    import json
    import subprocess
    import sys

    fixture = os.path.join(ROOT, "tests", "fixtures", "rules", "sequence-length", "bad.sh")
    case = os.path.join(ROOT, "tests", "recall", "cases", "megatron-vpp-one-microbatch.sh")
    commands = [["--format", "json", fixture], ["--format", "json", "--verl", "0.7.0", case]]
    env = dict(os.environ, XDG_CACHE_HOME=str(tree / "cache"), PYTHONPATH=os.path.join(ROOT, "src"))
    runs = []
    for _ in range(2):
        shutil.rmtree(tree / "cache" / "verl-preflight" / "results", ignore_errors=True)
        shutil.rmtree(tree / "cache" / "verl-preflight" / "reports", ignore_errors=True)
        proc = subprocess.run(
            [sys.executable, "-c", _PARSES, json.dumps(commands)], env=env, capture_output=True, text=True, timeout=300
        )
        reports, at, text = [], 0, proc.stdout
        while text[at:].strip():  # the two JSON reports, one after the other
            report, at = json.JSONDecoder().raw_decode(text, len(text) - len(text[at:].lstrip()))
            reports.append(report)
        parsed = next(line for line in proc.stderr.splitlines() if line.startswith("PARSED"))
        runs.append(([r["findings"] for r in reports], parsed.split()[1:]))
    (first, parsed_first), (second, parsed_second) = runs
    assert first == second
    rules = {f["rule"] for findings in first for f in findings}
    assert {"sequence-length", "micro-batch-split"} <= rules, rules
    for module in ("vllm_async_server.py", "schedules.py"):
        assert any(p.endswith(module) for p in parsed_first), module
        assert not any(p.endswith(module) for p in parsed_second), module


def test_a_scripts_result_depends_on_the_repositorys_docs_and_wrappers_only_where_it_takes_inputs(tree):
    """A launch that reads a variable the script never sets depends on the repository's README
    and its other scripts (one may export it); a script that sets everything depends on neither:
    an edit to another script or to the README re-checks only the first."""
    (tree / ".git").mkdir()
    (tree / "README.md").write_text("export EPOCHS=2\n")
    (tree / "takes_input.sh").write_text("#!/usr/bin/env bash\nA=(trainer.total_epochs=$EPOCHS)\n" + LAUNCH)
    files = ["takes_input.sh", "alone.sh"]
    run = Run()
    run(files)
    (tree / "uses_lib.sh").write_text((tree / "uses_lib.sh").read_text() + "# edited\n")
    run(files)
    assert run.checked == 1  # takes_input.sh, which read it (as a possible wrapper): alone.sh is kept
    (tree / "README.md").write_text("export EPOCHS=3\n")
    run(files)
    assert run.checked == 1
    run(files)
    assert run.checked == 0


def _project_report(tmp_path, text: str):
    """`report(*options)`: (exit status, JSON report) of the tool run on a project's one script
    `text` (settled: its digest is kept, as a checkout's is), with the project's own cache."""
    import subprocess
    import sys

    tool = os.path.join(ROOT, "tools", "validate_scripts.py")
    (tmp_path / ".git").mkdir()
    script = tmp_path / "run.sh"
    script.write_text(text)
    past = os.stat(script).st_mtime - 60
    os.utime(script, (past, past))
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))

    def report(*args):
        proc = subprocess.run([sys.executable, tool, "--format", "json", *args, str(script)],
                              capture_output=True, text=True, env=env, cwd=tmp_path)
        return proc.returncode, proc.stdout

    return report


def test_a_pin_file_added_after_a_run_changes_the_kept_result(tmp_path):
    """Issue 46's stale verdict: a requirements.txt pinning megatron-core 0.13.1 added after a
    run. The warm run replayed the old report (the search for pin files recorded what it found,
    not that nothing was there); it now gives what --no-cache gives."""
    report = _project_report(
        tmp_path,
        "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer "
        "algorithm.adv_estimator=grpo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 "
        "+actor_rollout_ref.actor.megatron.override_transformer_config.moe_router_fusion=True\n",
    )
    before = report()
    assert report() == before  # warm: the same
    (tmp_path / "requirements.txt").write_text("megatron-core==0.13.1\n")
    after = report()
    assert after == report("--no-cache") and after != before


def test_a_verl_vendored_after_a_run_is_the_one_checked_next(tmp_path):
    """The search for a vendored verl records what it did not find: a project that gains a copy
    of verl after a warm run (one whose ppo_trainer.yaml lacks trainer.total_epochs) is checked
    against that copy at the next run, as --no-cache checks it, not replayed from before."""
    import json

    from verl_preflight.core.config_location import found

    report = _project_report(tmp_path, "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo trainer.total_epochs=2\n")
    before = report()
    assert report() == before  # warm: the same
    verl = tmp_path / "verl"
    shutil.copytree(found(None)[2], verl, ignore=shutil.ignore_patterns("__pycache__"))
    config = verl / "trainer" / "config" / "ppo_trainer.yaml"
    config.write_text(config.read_text().replace("  total_epochs: 30\n", ""))
    after = report()
    assert after == report("--no-cache") and after != before
    doc = json.loads(after[1])
    assert [f["rule"] for f in doc["findings"]] == ["override-missing-key"]
    assert doc["scripts"][0]["profiles"][0]["launches"][0]["target"]["verl"]["origin"] == "vendored, verl"
