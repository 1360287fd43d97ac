"""A command line's kept report written at the start (command_memo.py): the warm start loads
none of the checks, and every answer the steps before the checks give (the scripts found,
the project's settings, the config tree, the schema) is asked again, so a change to any of
them gives the report a run without the cache writes.

Every case runs the real command line (verl_preflight.app.start) in a subprocess with a fresh
cache folder.
"""

from __future__ import annotations

import ast
import json
import os
import shutil

import pytest
from conftest import MEMO_LAUNCH, MEMO_TYPO, REPORT_TIME, ROOT, spied_run, unkept_cache

from verl_preflight.app import command_memo

LAUNCH, TIME = MEMO_LAUNCH, REPORT_TIME
CHECKS = "verl_preflight.app.application"  # loaded by every run that checks or builds the report key


@pytest.fixture
def tree(memo_tree):
    (memo_tree / "typo.sh").write_text(MEMO_TYPO)
    return memo_tree


def run(tree, *argv, **env):
    environment = dict(os.environ, **{"XDG_CACHE_HOME": str(tree / "cache"), **env})
    environment.pop("NO_COLOR", None)
    for name, value in env.items():
        if value is None:
            environment.pop(name)
    proc, _, _ = spied_run(list(argv), env=environment, cwd=tree)
    assert proc.returncode in (0, 1), proc.stderr
    return proc


def same(a, b) -> bool:
    return (TIME.sub("", a.stdout), a.stderr, a.returncode) == (TIME.sub("", b.stdout), b.stderr, b.returncode)


@pytest.fixture
def unkept(derived_facts_cache):
    """The run that finds no tree's results, report or entry kept: what every start must write."""
    return lambda tree, *argv, **env: run(
        tree, *argv, **env, XDG_CACHE_HOME=str(unkept_cache(derived_facts_cache, tree))
    )


def warm_after(unkept, tree, change, *argv, **env):
    """(the start after `change`, the run that finds nothing kept then): the first two runs
    keep the report and find it from the start."""
    run(tree, *argv, **env)
    assert CHECKS not in run(tree, *argv, **env).ours
    change()
    return run(tree, *argv, **env), unkept(tree, *argv, **env)


@pytest.mark.parametrize("fmt", [pytest.param("text", marks=pytest.mark.slow), "json"])
def test_a_warm_start_writes_the_kept_report_and_loads_none_of_the_checks(
    tree, unkept, fmt, derived_facts_cache, tmp_path_factory
):
    # A digest is kept with a file's stamp only once its times are SETTLED_NS old (file_digests):
    # the tree is let settle first, so the cold run keeps every digest however long it takes.
    # (Without it, a cold run that ended before typo.sh settled and a warm one after it differed
    # under load: the warm run then kept that digest, writing and importing json.)
    import time

    from conftest import derived_facts_only

    from verl_preflight.store.file_digests import SETTLED_NS

    want = unkept(tree, "--format", fmt, ".")
    for _ in range(5):
        cache = str(derived_facts_only(derived_facts_cache, tmp_path_factory.mktemp("cold")))
        time.sleep(SETTLED_NS / 1e9 + 0.2)
        since = time.time_ns() - SETTLED_NS
        cold = run(tree, "--format", fmt, ".", XDG_CACHE_HOME=cache)
        before = _digest_table(cache)
        warm = run(tree, "--format", fmt, ".", XDG_CACHE_HOME=cache)
        written = {k: v for k, v in _digest_table(cache).items() if before.get(k) != v}
        # Another process that writes where the cold run looked (the tests beside this one make
        # folders in /tmp, above the tree, where the absence of a vendored verl is kept) makes
        # the warm run look again and keep what it finds, rightly, with a write: the pair is
        # then run again with a cache of its own. Any other write is this test's failure.
        if not written or not all(_changed_since(key, record, since) for key, record in written.items()):
            break
    else:
        pytest.skip("what the cold run looked at was written to during each of five tries")
    assert CHECKS in cold.ours
    assert CHECKS not in warm.ours and "verl_preflight.app.cli" not in warm.ours
    # nor json, re or dataclasses (a quarter of a warm start): the cold run kept the digest of
    # every file it read with its stamp, so the warm one writes nothing, and it reads the kept
    # entries with json's C scanner
    assert not {"json", "re", "dataclasses", "yaml"} & set(warm.modules), (written, " ".join(warm.modules))
    assert same(cold, want) and same(warm, want)
    if fmt == "text":
        assert TIME.search(warm.stdout)  # this run's time


def _digest_table(cache: str) -> dict:
    """The records of the cache's digests.json (file_digests), read past its signature line."""
    try:
        with open(os.path.join(cache, "verl-preflight", "digests.json"), "rb") as fh:
            return json.loads(fh.read().partition(b"\n")[2]).get("files", {})
    except (OSError, ValueError):
        return {}


def _changed_since(key: str, record: list, since: int) -> bool:
    """Whether what a digests.json record stands for was written at or after `since` (ns): a
    folder's listing (its folders), a missing file (the folder above it), a file."""
    if key.startswith("listing:"):
        paths = [stamp[0] for stamp in record[1]]
    elif len(record) == 7:
        paths = [record[6]]
    elif key.startswith("derived:"):
        return False
    else:
        paths = [key]
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            return True
        if max(info.st_mtime_ns, info.st_ctime_ns) >= since:
            return True
    return False


def test_a_run_that_finds_the_derived_facts_imports_no_pyyaml(tree):
    """The shipped schema and model table are kept with the facts derived from verl's code
    (shipped.py), and the defaults verl's config writes (`${oc.select:...,null}`) are typed
    without it: a check of scripts new to the machine (its tree checked before, the scripts'
    results and reports gone) imports no PyYAML (a tenth of one file's check). (A key verl
    does not have is looked for in the root config's other options, read as YAML: not here.)"""
    (tree / "typo.sh").unlink()
    first = run(tree, "--format", "json", ".")
    for scripts_only in ("results", "reports", "commands"):
        shutil.rmtree(tree / "cache" / "verl-preflight" / scripts_only)
    again = run(tree, "--format", "json", ".")
    assert CHECKS in again.ours and "verl_preflight.rules.schema" in again.ours
    assert "yaml" not in again.modules and same(again, first)


@pytest.mark.slow
def test_a_new_script_in_a_folder_given_is_found(tree, unkept):
    def add():
        (tree / "new.sh").write_text("#!/usr/bin/env bash\nA=(trainer.total_epochs=4)\n" + LAUNCH)

    warm, want = warm_after(unkept, tree, add, "--format", "json", ".")
    assert "new.sh" in {os.path.basename(s["path"]) for s in json.loads(warm.stdout)["scripts"]}
    assert CHECKS in warm.ours and same(warm, want)


@pytest.mark.slow
def test_new_project_settings_apply(tree, unkept):
    def exclude():
        (tree / "pyproject.toml").write_text('[tool.validate-scripts]\nexclude = ["typo.sh"]\n')

    warm, want = warm_after(unkept, tree, exclude, ".")
    assert "typo.sh" not in warm.stdout and warm.returncode == 0
    assert same(warm, want)


@pytest.mark.slow
def test_an_edited_schema_file_applies(tree, unkept):
    schema = tree / "schema.yaml"
    schema.write_text(open(os.path.join(ROOT, "src", "verl_preflight", "rules", "schema.yaml")).read())

    def edit():
        schema.write_text(schema.read_text() + "\n# edited\n")

    warm, want = warm_after(unkept, tree, edit, "--schema", str(schema), ".")
    assert CHECKS in warm.ours and same(warm, want)


@pytest.mark.slow
def test_another_config_tree_in_the_environment_is_located(tree, unkept):
    from verl_preflight.core.config_location import found

    copy = tree / "cfg" / "verl" / "trainer" / "config"
    shutil.copytree(found(None)[0], copy)
    root = copy / "ppo_trainer.yaml"
    root.write_text(root.read_text().replace("total_epochs:", "total_epoch:"))
    warm, want = warm_after(unkept, tree, lambda: None, "--format", "json", ".", VERL_CONFIG_DIR=None)
    assert same(warm, want)
    moved = run(tree, "--format", "json", ".", VERL_CONFIG_DIR=str(copy))
    assert same(moved, run(tree, "--no-cache", "--format", "json", ".", VERL_CONFIG_DIR=str(copy)))
    assert json.loads(moved.stdout)["config_source"] != json.loads(warm.stdout)["config_source"]


@pytest.mark.slow
def test_an_altered_entry_is_a_miss(tree, unkept):
    run(tree, ".")
    run(tree, ".")
    folder = tree / "cache" / "verl-preflight" / "commands"
    (entry,) = folder.rglob("*.json")
    data = entry.read_bytes()
    forged = data.replace(b"typo.sh", b"typo.sx")
    assert forged != data
    entry.write_bytes(forged)
    warm = run(tree, ".")
    assert CHECKS in warm.ours and same(warm, unkept(tree, "."))


@pytest.mark.slow
def test_no_entry_is_kept_for_a_run_without_the_cache_or_of_the_machine(tree):
    run(tree, "--no-cache", ".")
    run(tree, "--profile", "current", ".")
    assert not list((tree / "cache" / "verl-preflight").glob("commands/*/*.json"))


def _environment_reads(path: str):
    """The names this module reads from os.environ: os.environ.get("X"), os.getenv("X"),
    os.environ["X"], "X" in os.environ."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.environ.get", "os.getenv") and node.args:
            name = node.args[0]
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            name = node.slice
        elif isinstance(node, ast.Compare) and any(ast.unparse(c) == "os.environ" for c in node.comparators):
            name = node.left
        if name is not None:
            yield name.value if isinstance(name, ast.Constant) else ast.unparse(name)


def test_every_variable_the_tool_reads_is_in_the_key_or_asked_again():
    """A variable that changes a report and is neither in the key nor asked again at the start
    would replay a stale report: a new read of os.environ fails here until it is placed."""
    asked_again = {"VERL_CONFIG_DIR"}  # config_location.found, run by the start
    the_cache = {"XDG_CACHE_HOME"}  # names the folder the entries are in
    never_kept = {"TRACEBACK"}  # runner.py, --show-traceback: only an internal error's line, never kept
    # --profile current, and preflight (its cluster and the nodes' probe): never kept
    machine = {"machine.py", "validate.py", "cluster.py", "node_probe.py"}
    key = {"command_memo.py"}  # reads ENVIRONMENT into the key
    package = os.path.join(ROOT, "src", "verl_preflight")
    unplaced = []
    for dirpath, _, files in os.walk(package):
        for name in files:
            if name.endswith(".py") and name not in machine | key:
                for read in _environment_reads(os.path.join(dirpath, name)):
                    if read not in (*command_memo.ENVIRONMENT, *asked_again, *the_cache, *never_kept):
                        unplaced.append(f"{name}: {read}")
    assert unplaced == []


def _started(tree, argv, **kwargs):
    """The command started as the console script starts it, standard streams as given."""
    import subprocess
    import sys

    src = os.path.join(ROOT, "src")
    code = f"import sys; sys.path.insert(0, {src!r}); from verl_preflight.app.start import main; sys.exit(main())"
    env = dict(os.environ, XDG_CACHE_HOME=str(tree / "cache"))
    return subprocess.run([sys.executable, "-c", code, *argv], env=env, cwd=tree, text=True, **kwargs)


@pytest.mark.slow
def test_a_warm_start_says_its_lines_in_the_order_a_full_run_does(tree):
    """A line said on standard error before the report (here: a --profile key no script reads)
    comes before it in one stream (2>&1), warm as cold, even for a report larger than a pipe's
    buffer."""
    import subprocess

    for n in range(40):
        (tree / f"more{n}.sh").write_text(MEMO_TYPO)
    argv = ["--format", "json", "--profile", "NOPE=1", "."]
    merged = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    want = _started(tree, ["--no-cache", *argv], **merged).stdout
    assert want.index("NOPE") < want.index("{")
    _started(tree, argv, **merged)
    assert _started(tree, argv, **merged).stdout == want


@pytest.mark.slow
def test_a_report_that_cannot_be_written_is_one_line_and_exit_2_warm_as_cold(tree):
    with open(os.devnull, "w") as null:
        _started(tree, ["."], stdout=null, stderr=null)
    for _ in range(2):  # the second start replays the kept report
        with open("/dev/full", "w") as full:
            proc = _started(tree, ["."], stdout=full, stderr=__import__("subprocess").PIPE)
        assert proc.returncode == 2
        assert "Traceback" not in proc.stderr and "internal error: OSError" in proc.stderr
