"""The facts of released verl trees shipped with the package (store/released.py, made by
tools/gen_release_facts.py): made by this code, used for a tree of a release's very files, and
never for a file that differs."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zipfile

import pytest

from verl_preflight.app.cli import main as run
from verl_preflight.sources import _pyast
from verl_preflight.store import released, session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "tools", "gen_release_facts.py")
WHEELS = os.path.join(ROOT, ".venv", "wheels")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen_release_facts  # noqa: E402

LAUNCH = """\
python3 -m verl.trainer.main_ppo model_engine=megatron trainer.total_epochs=2 \\
    actor_rollout_ref.rollout.name=vllm data.train_batch_size=64 actor_rollout_ref.rollout.n=4 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=16 trainer.n_gpus_per_node=8 trainer.nnodes=1
"""


def _table(path: str) -> dict:
    with open(path, "rb") as fh:
        return json.loads(gzip.decompress(fh.read()))


def test_each_shipped_table_is_made_by_this_code():
    """A table's values are what this code derives: after an edit of a module that derives facts
    or composes, `make release-facts` writes them again (the tables of older code are never used,
    so a stale one costs time, not truth; this test says which)."""
    modules = gen_release_facts.code_modules()
    names = sorted(f for f in os.listdir(released.FOLDER) if f.endswith(".json.gz"))
    assert names == sorted(f"verl-{v}.json.gz" for v in gen_release_facts.RELEASES)
    with open(os.path.join(released.FOLDER, "index.json"), encoding="utf-8") as fh:
        index = json.load(fh)["trees"]
    stale = []
    for name in names:
        doc = _table(os.path.join(released.FOLDER, name))
        if doc["modules"] != modules or doc["code"] != released.code_digest(modules):
            stale.append(name)
        assert index[doc["version"]] == doc["compositions"]["tree"]
    assert not stale, f"made by other code: {', '.join(stale)}; run `make release-facts`"


def test_a_path_below_the_tree_is_written_relative_to_it():
    root = "/opt/site-packages/verl"
    value = {"/opt/site-packages/verl/trainer/main_ppo.py": ("/opt/site-packages/verl", "/opt/site-packages/verlx", 3)}
    rel = released.relative(value, root)
    assert rel == {released.ROOT + "/trainer/main_ppo.py": (released.ROOT, "/opt/site-packages/verlx", 3)}
    assert released.absolute(rel, "/elsewhere/verl") == {
        "/elsewhere/verl/trainer/main_ppo.py": ("/elsewhere/verl", "/opt/site-packages/verlx", 3)
    }


def _release_tree(tmp_path, version: str):
    """A project vendoring verl `version` as its wheel holds it, with run.sh launching it."""
    wheel = [f for f in os.listdir(WHEELS) if f.startswith(f"verl-{version}-")] if os.path.isdir(WHEELS) else []
    if not wheel:
        pytest.skip(f".venv/wheels has no verl {version} wheel (make setup downloads it)")
    with zipfile.ZipFile(os.path.join(WHEELS, wheel[0])) as zf:
        zf.extractall(tmp_path, [m for m in zf.namelist() if m.startswith("verl/")])
    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text(LAUNCH)
    return tmp_path


def _report(project, capsys, monkeypatch, shipped: bool) -> tuple[dict, set]:
    """The JSON report of run.sh checked with no cache, and the verl modules parsed for it;
    with the shipped tables or, `shipped=False`, deriving every fact. (Every module's bytes
    are read either way, once a machine: a fact rests on which modules spell a name.)"""
    session.begin()
    if not shipped:
        monkeypatch.setattr(released, "fact", lambda *_: None)
        monkeypatch.setattr(released, "compositions", lambda *_: None)
    read = set()
    real = _pyast._parsed  # (what parse_file parses a source with)

    def spy(text, path):
        read.add(os.path.abspath(path))
        return real(text, path)

    monkeypatch.setattr(_pyast, "_parsed", spy)
    monkeypatch.chdir(project)
    capsys.readouterr()
    status = run(["--no-cache", "--format", "json", "run.sh"])
    report = json.loads(capsys.readouterr().out)
    monkeypatch.undo()
    session.begin()
    return (status, report), {p for p in read if p.startswith(str(project / "verl"))}


def test_a_release_tree_is_checked_from_its_table_as_if_derived(tmp_path, capsys, monkeypatch):
    """verl 0.9.1's files, vendored: every fact the check needs comes from the table (each checked
    against the digests of the files it was derived from), so it reads a fraction of the modules
    deriving parses (those holding a statement a fact points to, run alone, and the entry
    module), and reports what deriving the facts here reports."""
    project = _release_tree(tmp_path, "0.9.1")
    from_table, parsed_with = _report(project, capsys, monkeypatch, shipped=True)
    derived, parsed_without = _report(project, capsys, monkeypatch, shipped=False)
    assert from_table == derived
    assert parsed_with < parsed_without and len(parsed_with) * 3 < len(parsed_without)


def test_a_fork_that_edited_a_module_derives_what_reads_it(tmp_path, capsys, monkeypatch):
    """A fork of 0.9.1 that registers an advantage estimator of its own and adds an assert to
    validate_config: the facts that read those modules are derived from the fork (the estimator
    is known, the assert reported, as deriving every fact reports them), the others come from
    the table."""
    project = _release_tree(tmp_path, "0.9.1")
    (project / "run.sh").write_text(
        LAUNCH.replace("trainer.total_epochs=2", "trainer.total_epochs=2 algorithm.adv_estimator=my_fork_est")
    )
    module = project / "verl" / "utils" / "config.py"
    code = module.read_text()
    anchor = '    """\n    # number of GPUs total'
    assert anchor in code
    module.write_text(
        code.replace(
            anchor, '    """\n    assert config.trainer.total_epochs > 5, "fork check"\n    # number of GPUs total', 1
        )
    )
    algos = project / "verl" / "trainer" / "ppo" / "core_algos.py"
    code = algos.read_text()
    anchor = "@register_adv_est(AdvantageEstimator.GRPO)  #"
    assert anchor in code
    algos.write_text(code.replace(anchor, '@register_adv_est("my_fork_est")\n' + anchor, 1))
    (status, report), read = _report(project, capsys, monkeypatch, shipped=True)
    assert status == 1
    messages = [f["message"] for f in report["findings"] if f["rule"] == "verl-check"]
    assert any("fork check" in m for m in messages), messages
    assert not [f for f in report["findings"] if "my_fork_est" in f["message"]], report["findings"]
    assert str(module) in read and str(algos) in read
    derived, read_deriving = _report(project, capsys, monkeypatch, shipped=False)
    assert (status, report) == derived
    assert read < read_deriving  # (the facts that do not read the edited modules: from the table)


@pytest.mark.slow
def test_the_tables_are_written_again_the_same_from_the_wheels(tmp_path):
    """tools/gen_release_facts.py --check: the tables of two releases made again from their
    wheels are byte for byte the shipped ones."""
    for version in ("0.9.1", "0.4.1"):
        _release_tree(tmp_path / version, version)  # (skips without the wheel)
    proc = subprocess.run([sys.executable, GEN, "--check", "0.9.1", "0.4.1"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


BUILT = "verl_preflight.sources.verl_builds.built_suffixes"


def test_a_module_added_that_spells_none_of_the_names_keeps_the_shipped_fact(tmp_path):
    """A checkout or a fork holds modules the wheel does not (verl's git tree has several): the
    facts that walk for one name rest on which modules spell it, so a module that does not keeps
    the table's fact; one that does makes the fact derived again, and it sees the new call."""
    from verl_preflight.sources.verl_builds import built_suffixes
    from verl_preflight.store.derived import _unchanged

    root = str(_release_tree(tmp_path, "0.9.1") / "verl")
    extra = os.path.join(root, "utils", "project_helper.py")
    with open(extra, "w", encoding="utf-8") as fh:
        fh.write("def helper(config):\n    return config.trainer.total_epochs\n")
    session.begin()
    assert released.fact(BUILT, (root,), _unchanged) is not None
    with open(extra, "a", encoding="utf-8") as fh:
        fh.write("\ndef built(config):\n    return omega_conf_to_dataclass(config.trainer.project_section)\n")
    session.begin()
    assert released.fact(BUILT, (root,), _unchanged) is None
    assert ("trainer", "project_section") in built_suffixes(root)
    session.begin()
