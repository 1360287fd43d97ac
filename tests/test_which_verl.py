"""The verl a launch imports, resolved as Python would (issue 55): target/launch_verl.py.

Each test builds, in a folder of its own, a layout seen in a public project built on verl (a
fork in a subfolder that the README installs and the script `cd`s into, a verl checkout at the
root installed from the docs, verl's recipe repository with a REQUIRED_VERL.txt per recipe,
`ray job submit --working-dir`, two subprojects with a fork each, PYTHONPATH set by the script)
and runs the command as a user runs it, from the repository's root with no flags.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import ROOT

from verl_preflight.app.cli import main

# a key every verl config tree here has, and that the copies below drop (so that a launch that
# sets it is refused by that copy and by nothing else)
KEY = "trainer.total_epochs=2"
LAUNCH_ARGS = (
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1"
)
HYDRA_APP = """\
import hydra


@hydra.main(config_path="{path}", config_name="{name}", version_base=None)
def main(config):
    pass
"""
EXTENDS_VERL = "hydra:\n  searchpath:\n    - pkg://verl/trainer/config\n\ndefaults:\n  - ppo_trainer\n  - _self_\n"


def _report(capsys, *args, cwd=None) -> tuple[int, dict]:
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        code = main(["--no-cache", "--format", "json", *map(str, args)])
    finally:
        os.chdir(here)
    return code, json.loads(capsys.readouterr().out)


def _launches(doc: dict) -> list[dict]:
    return [la for s in doc["scripts"] for p in s["profiles"] for la in p["launches"]]


def _verls(doc: dict) -> set:
    return {(la["target"]["verl"]["origin"], la["target"]["verl"]["version"]) for la in _launches(doc)}


def _rules(doc: dict) -> list:
    return sorted((os.path.basename(f["path"]), f["line"], f["rule"]) for f in doc["findings"])


def _installed_tree() -> str:
    from verl_preflight.core.config_location import installed_root

    return os.path.join(installed_root(), "trainer", "config")


def _verl(holder, version: str):
    """A verl package in `holder` (holder/verl: `__init__.py`, its config tree without
    trainer.total_epochs, its version file) beside a setup.py, as a checkout of verl has it."""
    package = holder / "verl"
    shutil.copytree(_installed_tree(), package / "trainer" / "config")
    (package / "__init__.py").write_text("")
    (package / "version").mkdir()
    (package / "version" / "version").write_text(version + "\n")
    (holder / "setup.py").write_text("")
    yaml = package / "trainer" / "config" / "ppo_trainer.yaml"
    yaml.write_text(yaml.read_text().replace("  total_epochs:", "  total_epoch_count:", 1))
    return package


def _repo(tmp_path, name="proj"):
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)
    return root


def _write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _wheels() -> str:
    wheels = os.path.join(ROOT, ".venv", "wheels")
    if not os.path.isfile(os.path.join(wheels, "verl-0.8.0-py3-none-any.whl")):
        pytest.skip("make has not downloaded the verl wheels (.venv/wheels)")
    return wheels


# ---- the working directory of the launch --------------------------------------------------------


def test_a_fork_the_readme_installs_in_a_subfolder_and_the_script_cds_into(tmp_path, capsys):
    """ElliottYan/LUFFY: the README installs luffy/verl (`cd luffy && pip install -e . && cd verl
    && pip install -e .`) and the scripts `cd $ROOT/luffy/verl/` before `python3 -m
    verl.mix_src.main_mix_ppo`, a module only the fork has. It is checked against that fork."""
    root = _repo(tmp_path, "LUFFY")
    package = _verl(root / "luffy" / "verl", "0.1")
    _write(package / "mix_src" / "main_mix_ppo.py", HYDRA_APP.format(path="../trainer/config", name="ppo_trainer"))
    _write(root / "README.md", "# LUFFY\n\n```bash\ncd luffy\npip install -e .\ncd verl\npip install -e .\n```\n")
    script = _write(
        root / "exp_scripts" / "train.sh",
        f"ROOT=/mnt/somewhere/LUFFY\ncd $ROOT/luffy/verl/\npython3 -m verl.mix_src.main_mix_ppo {LAUNCH_ARGS} {KEY}\n",
    )
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [("train.sh", 3, "override-missing-key")]
    ((origin, version),) = _verls(doc)
    assert version == "0.1" and origin.endswith("luffy/verl/verl") and "train.sh:2" in origin, origin
    # with no `cd`, the verl the README installs is the one site-packages holds
    script.write_text(f"python3 -m verl.mix_src.main_mix_ppo {LAUNCH_ARGS} {KEY}\n")
    code, doc = _report(capsys, script)
    assert code == 1 and _verls(doc) == {("installed by README.md:7, luffy/verl/verl", "0.1")}


def test_ray_job_submit_runs_the_entry_in_its_working_dir(tmp_path, capsys):
    """`ray job submit --working-dir ./gkd/megatron -- python3 -m main_gkd`: Ray runs the
    entrypoint in (a copy of) that folder, whose main_gkd.py is a Hydra app; before, this was
    "no verl launch"."""
    root = _repo(tmp_path)
    folder = root / "gkd" / "megatron"
    _write(folder / "main_gkd.py", HYDRA_APP.format(path="config", name="gkd_trainer"))
    _write(folder / "config" / "gkd_trainer.yaml", EXTENDS_VERL)
    script = _write(
        root / "gkd" / "run.sh",
        "ray job submit --address=http://127.0.0.1:8265 --working-dir ./gkd/megatron -- "
        f"python3 -m main_gkd {LAUNCH_ARGS} trainer.total_epoch=2\n",
    )
    code, doc = _report(capsys, script)
    (launch,) = _launches(doc)
    assert launch["module"] == "main_gkd" and launch["config_name"] == "gkd_trainer"
    assert code == 1 and _rules(doc) == [("run.sh", 1, "override-missing-key")]


def test_the_entry_modules_own_sys_path_insert_comes_first(tmp_path, capsys):
    """A project's entry puts its fork first on sys.path (`sys.path.insert(0, os.path.join(
    os.path.dirname(__file__), "third_party", "fork"))`) before it imports verl: that verl."""
    root = _repo(tmp_path)
    _verl(root / "third_party" / "fork", "0.3.0.dev")
    app = (
        "import os, sys\n"
        'sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "third_party", "fork"))\n'
        + HYDRA_APP.format(path="config", name="trainer")
    )
    _write(root / "myproj" / "__init__.py", "")
    _write(root / "myproj" / "main.py", app)
    _write(root / "myproj" / "config" / "trainer.yaml", EXTENDS_VERL)
    script = _write(root / "run.sh", f"python3 -m myproj.main {LAUNCH_ARGS} {KEY}\n")
    code, doc = _report(capsys, script)
    ((origin, version),) = _verls(doc)
    assert code == 1 and version == "0.3.0.dev" and origin.startswith("sys.path.insert at main.py:2"), origin


def test_pythonpath_the_script_exports_comes_before_site_packages(tmp_path, capsys):
    root = _repo(tmp_path)
    _verl(root / "third_party" / "fork", "0.5.0.dev")
    script = _write(
        root / "run.sh",
        'export PYTHONPATH="$(pwd)/third_party/fork:$PYTHONPATH"\n'
        f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} {KEY}\n",
    )
    code, doc = _report(capsys, script, cwd=root)
    ((origin, version),) = _verls(doc)
    assert code == 1 and version == "0.5.0.dev" and origin.startswith("PYTHONPATH="), origin


# ---- what the repository installs ------------------------------------------------------------


def test_a_verl_checkout_at_the_root_that_the_docs_install_runs_under_the_projects_own_entry(tmp_path, capsys):
    """TIGER-AI-Lab/verl-tool: a whole verl checkout in verl/ (its package verl/verl, version
    0.7.0.dev), installed by assets/docs/install.md (`uv pip install -e verl`), and the project's
    own entry `python3 -m verl_tool.trainer.main_ppo`: checked against verl/verl."""
    root = _repo(tmp_path)
    _verl(root / "verl", "0.7.0.dev")
    _write(root / "verl_tool" / "__init__.py", "")
    _write(root / "verl_tool" / "trainer" / "__init__.py", "")
    _write(root / "verl_tool" / "trainer" / "main_ppo.py", HYDRA_APP.format(path="config", name="trainer"))
    _write(root / "verl_tool" / "trainer" / "config" / "trainer.yaml", EXTENDS_VERL)
    _write(root / "assets" / "docs" / "install.md", "```bash\nuv sync\nuv pip install -e verl\nuv pip install -e .\n```\n")
    script = _write(root / "examples" / "train.sh", f"python3 -m verl_tool.trainer.main_ppo {LAUNCH_ARGS} {KEY}\n")
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [("train.sh", 1, "override-missing-key")]
    assert _verls(doc) == {("installed by assets/docs/install.md:3, verl/verl", "0.7.0.dev")}


def test_two_subprojects_each_run_their_own_fork_whatever_else_is_checked(tmp_path, capsys):
    """A repository of two subprojects, each with its own fork that its own README installs: each
    script is checked against its subproject's, and the same script gives the same report alone
    or beside the other."""
    root = _repo(tmp_path)
    for name, version in (("alpha", "0.1"), ("beta", "0.2")):
        _verl(root / name / "verl", version)
        _write(root / name / "README.md", "```\ncd verl\npip install -e .\n```\n")
        _write(root / name / "run.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} {KEY}\n")
    alone = _report(capsys, root / "alpha" / "run.sh")
    both = _report(capsys, root / "alpha" / "run.sh", root / "beta" / "run.sh")
    assert _verls(alone[1]) == {("installed by alpha/README.md:3, alpha/verl/verl", "0.1")}
    assert _verls(both[1]) == {
        ("installed by alpha/README.md:3, alpha/verl/verl", "0.1"),
        ("installed by beta/README.md:3, beta/verl/verl", "0.2"),
    }
    assert alone[1]["findings"] == [f for f in both[1]["findings"] if "alpha" in f["path"]]


def test_a_repository_that_holds_two_verls_and_says_nothing_leaves_the_launch_unchecked(tmp_path, capsys):
    root = _repo(tmp_path)
    _verl(root / "forks" / "a", "0.1")
    _verl(root / "forks" / "b", "0.2")
    script = _write(root / "run.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} {KEY}\n")
    code, doc = _report(capsys, script)
    (launch,) = _launches(doc)
    assert code == 0 and doc["findings"] == []
    assert "holds several verls" in launch["unchecked"] and "forks/a/verl, forks/b/verl" in launch["unchecked"]
    assert not any(origin == "installed" for origin, _ in _verls(doc))
    # one verl it holds, installed by nothing it says: that one, said so
    shutil.rmtree(root / "forks" / "b")
    code, doc = _report(capsys, script)
    ((origin, version),) = _verls(doc)
    assert code == 1 and version == "0.1" and origin.startswith("the one verl the repository holds, forks/a/verl")


# ---- verl's recipe repository ---------------------------------------------------------------------


def test_verls_recipe_repository_runs_each_recipe_against_its_required_verl(tmp_path, capsys, monkeypatch):
    """verl-project/verl-recipe: the repository is meant to sit at verl/recipe, so `python3 -m
    recipe.dapo.main_dapo` runs its own dapo/main_dapo.py; each recipe's REQUIRED_VERL.txt says
    which verl: a tag is that release, a commit is a verl not at hand (unchecked, saying so), and
    a module that reads its own arguments (`recipe.r1.data_process`) is no launch."""
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", _wheels())
    root = _repo(tmp_path, "verl-recipe")
    new_in_091 = "actor_rollout_ref.actor.fsdp_config.turbo_config.distributed.expert_parallel_size=1"
    for name, required in (
        ("dapo", "MODE=pinned_tag\nTAG=v0.8.0\nPIP_INSTALL=pip install verl==0.8.0\n"),
        ("r1", "MODE=rolling\nVERL_COMMIT=bcb638649a50e58494a8ddd92085ad1174f674b8\n"),
    ):
        _write(root / name / "__init__.py", "")
        _write(root / name / f"main_{name}.py", HYDRA_APP.format(path="config", name=f"{name}_trainer"))
        _write(root / name / "config" / f"{name}_trainer.yaml", EXTENDS_VERL)
        _write(root / name / "REQUIRED_VERL.txt", required)
        _write(root / name / "run.sh", f"python3 -m recipe.{name}.main_{name} {LAUNCH_ARGS} {new_in_091}\n")
    _write(root / "r1" / "data_process.py", "import argparse\nargparse.ArgumentParser().parse_args()\n")
    _write(root / "r1" / "prepare.sh", "python3 -m recipe.r1.data_process --local_dir ~/data/r1\n")
    code, doc = _report(capsys, root / "dapo" / "run.sh")
    assert code == 1 and _rules(doc) == [("run.sh", 1, "override-missing-key")]
    assert _verls(doc) == {("pinned, dapo/REQUIRED_VERL.txt:2: the release's wheel", "0.8.0")}
    code, doc = _report(capsys, root / "r1" / "run.sh")
    (launch,) = _launches(doc)
    assert code == 0 and "pinned to commit bcb638649a50e58494a8ddd92085ad1174f674b8" in launch["unchecked"]
    code, doc = _report(capsys, root / "r1" / "prepare.sh")
    assert code == 0 and _launches(doc) == [] and doc["findings"] == []


def test_a_pin_of_the_installed_release_is_the_installed_verl(tmp_path, capsys):
    """pip finds a `verl==0.9.1` pin already satisfied where 0.9.1 is installed: no fetch."""
    from verl_preflight.core.config_location import installed_root, installed_version

    version = installed_version(installed_root())
    root = _repo(tmp_path)
    _write(root / "requirements.txt", f"verl=={version}\n")
    script = _write(root / "run.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} trainer.total_epoch=2\n")
    code, doc = _report(capsys, script)
    assert code == 1 and _verls(doc) == {(f"pinned, requirements.txt:1: the installed verl {version}", version)}


# ---- the project's own code counts ----------------------------------------------------------------


def test_a_value_the_forks_own_entry_folder_handles_is_no_error(tmp_path, capsys):
    """LUFFY's fork handles `algorithm.adv_estimator=grpo_split` in its own trainer (mix_src/),
    which the launch's entry builds instead of verl's: verl's registry check is not followed
    there, so the value is an info naming the code that spells it, not an error."""
    from verl_preflight.core.config_location import installed_root

    root = _repo(tmp_path)
    shutil.copytree(installed_root(), root / "fork" / "verl", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "fork" / "setup.py").write_text("")
    entry = HYDRA_APP.format(path="../trainer/config", name="ppo_trainer")
    _write(root / "fork" / "verl" / "mix_src" / "main_mix_ppo.py", entry)
    trainer = root / "fork" / "verl" / "mix_src" / "mix_trainer.py"
    _write(trainer, "def compute_advantage(data, adv_estimator):\n    if adv_estimator == 'grpo_split':\n        pass\n")
    script = _write(
        root / "run.sh",
        f"cd fork\npython3 -m verl.mix_src.main_mix_ppo {LAUNCH_ARGS} algorithm.adv_estimator=grpo_split\n",
    )
    code, doc = _report(capsys, script)
    (finding,) = [f for f in doc["findings"] if f["rule"] == "config-value"]
    assert code == 0 and finding["severity"] == "info" and "mix_src/mix_trainer.py:2" in finding["message"]
    trainer.write_text("def compute_advantage(data, adv_estimator):\n    pass\n")
    code, doc = _report(capsys, script)
    assert code == 1 and [f["severity"] for f in doc["findings"] if f["rule"] == "config-value"] == ["error"]


# ---- a git pin is checkable ---------------------------------------------------------------------


def _verl_repository(tmp_path) -> tuple[str, str]:
    """A bare git repository holding a verl tree (as verl's own has it: verl/ at its root) at one
    commit: (its path, the commit)."""
    import subprocess

    work = tmp_path / "verl-src"
    _verl(work, "0.8.0.dev")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    subprocess.run([*git, "-C", str(work), "add", "."], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-qm", "verl"], check=True)
    commit = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    bare = tmp_path / "verl.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return str(bare), commit


def test_a_commit_of_verl_a_project_pins_is_fetched_once_and_checked_against(tmp_path, capsys, monkeypatch):
    """`verl @ git+https://github.com/...@<sha>` (and REQUIRED_VERL.txt's VERL_COMMIT): that
    commit's verl/ is fetched once into the cache with git (here from a local bare repository,
    VERL_PREFLIGHT_VERL_GIT) and checked against; `--verl git:<sha>` asks for it by hand. Where it
    cannot be had the launch is unchecked, with the command that makes it checkable."""
    bare, commit = _verl_repository(tmp_path)
    root = _repo(tmp_path)
    _write(root / "requirements.txt", f"verl @ git+https://github.com/verl-project/verl.git@{commit}\n")
    script = _write(root / "run.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} {KEY}\n")
    code, doc = _report(capsys, script)
    (launch,) = _launches(doc)
    assert code == 0 and f"git clone https://github.com/verl-project/verl.git verl && git -C verl checkout {commit}" in (
        launch["unchecked"]
    )
    monkeypatch.setenv("VERL_PREFLIGHT_VERL_GIT", bare)
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [("run.sh", 1, "override-missing-key")]
    assert _verls(doc) == {(f"pinned to commit {commit}, requirements.txt:1: the commit's tree", "0.8.0.dev")}
    (root / "requirements.txt").unlink()
    code, doc = _report(capsys, "--verl", f"git:{commit}", script)
    assert code == 1 and _verls(doc) == {(f"--verl git:{commit}: the commit's tree", "0.8.0.dev")}


# ---- what the pages and setup scripts say ---------------------------------------------------------


def test_a_readme_that_clones_the_repository_and_cds_into_it_speaks_from_its_root(tmp_path, capsys):
    """Table-R1, spec_diag: `git clone https://github.com/x/Table-R1.git; cd Table-R1/verl; pip install
    -e .` is this repository's own clone: its verl/ is the one installed (its remote, .git/config,
    names it), not a Table-R1/verl folder that is not here."""
    root = _repo(tmp_path, "work")
    (root / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/x/Table-R1.git\n')
    _verl(root / "verl", "0.2.0.dev")
    _write(root / "README.md", "```bash\ngit clone https://github.com/x/Table-R1.git\ncd Table-R1/verl\npip install -e .\n```\n")
    script = _write(root / "script" / "train.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} {KEY}\n")
    code, doc = _report(capsys, script)
    assert code == 1 and _verls(doc) == {("installed by README.md:4, verl/verl", "0.2.0.dev")}


def test_a_comment_in_a_setup_script_installs_nothing(tmp_path, capsys):
    """RAGEN-AI/VAGEN's scripts/install.sh: `# pip install -e .` is a comment (a page's `# ` is a
    prompt, a script's is not)."""
    root = _repo(tmp_path)
    _verl(root / "forks" / "a", "0.1")
    _write(root / "scripts" / "install.sh", "cd forks/a\n# pip install -e .\n")
    script = _write(root / "run.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} {KEY}\n")
    code, doc = _report(capsys, script)
    ((origin, _),) = _verls(doc)
    assert origin.startswith("the one verl the repository holds"), origin


def test_a_forks_main_ppo_that_reads_argparse_is_no_hydra_launch_whatever_its_strings_say(tmp_path, capsys):
    """KempnerInstitute/Backtrack: the fork's verl/trainer/main_ppo.py keeps its old `@hydra.main`
    inside a string and reads one YAML path with argparse: its launches are no Hydra launches
    (read with `ast`, a decorator in a string is none)."""
    root = _repo(tmp_path)
    package = _verl(root / "verl", "0.1")
    _write(root / "README.md", "```\ncd verl\npip install -e .\n```\n")
    main_ppo = '''"""Old entry:
@hydra.main(config_path='config', config_name='ppo_trainer', version_base=None)
def main(config): ...
"""
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.parse_args()
'''
    _write(package / "trainer" / "main_ppo.py", main_ppo)
    for line in ("configs/gsm8k.yaml", "--config-name gsm8k trainer.total_epochs=2"):  # (its own option, or refused)
        script = _write(root / "run.sh", f"python3 -m verl.trainer.main_ppo {line}\n")
        code, doc = _report(capsys, script)
        (launch,) = _launches(doc)
        assert code == 0 and doc["findings"] == [] and "reads options of its own (argparse" in launch["unchecked"]


# ---- inputs the repository gives in other ways ----------------------------------------------------


def test_a_sourced_files_template_and_a_wrappers_wrapper_give_inputs(tmp_path, capsys):
    """verl-recipe's nemo_gym: `source ${SLURM_SUBMIT_DIR}/config.env` where the repository ships
    config.env.example; IPRC-DIP/CodeV-R1: run-direct.sh exports the variables and runs
    train-multigpu.sh, which runs the script. Under `set -u` neither is an unset-variable: both
    are inputs, said once in the script's note."""
    root = _repo(tmp_path)
    _write(root / "recipe" / "config.env.example", "VERL_ROOT=/path/to/verl\nexport RESULTS_ROOT=/results\n")
    _write(root / "run-direct.sh", "export GPUS_PER_NODE=8\nbash train-multigpu.sh\n")
    _write(root / "train-multigpu.sh", "ray job submit -- bash recipe/run.sh\n")
    script = _write(
        root / "recipe" / "run.sh",
        "#!/bin/bash\n#SBATCH --nodes=1\nset -euo pipefail\nsource ${SLURM_SUBMIT_DIR}/config.env\n"
        f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} trainer.default_local_dir=$RESULTS_ROOT/x "
        "trainer.n_gpus_per_node=$GPUS_PER_NODE data.train_files=$VERL_ROOT/data.parquet\n",
    )
    code, doc = _report(capsys, script)
    assert [f["rule"] for f in doc["findings"] if f["rule"] == "unset-variable"] == []
    (entry,) = doc["scripts"]
    assert {i["name"] for i in entry["inputs"]} >= {"VERL_ROOT", "RESULTS_ROOT", "GPUS_PER_NODE"}, entry["inputs"]


# ---- settings per script ----------------------------------------------------------------------------


def test_each_script_takes_the_settings_of_its_own_project_whatever_else_is_given(tmp_path, capsys):
    """Two subprojects with a [tool.validate-scripts] table each: a script is checked with its own
    project's settings, alone or beside the other's; --show-settings says which apply, from where."""
    root = _repo(tmp_path)
    _write(root / "a" / "pyproject.toml", '[tool.validate-scripts]\nseverity = { override-missing-key = "warning" }\n')
    _write(root / "b" / "pyproject.toml", '[tool.validate-scripts]\nseverity = { override-missing-key = "info" }\n')
    for name in ("a", "b"):
        _write(root / name / "run.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} trainer.total_epoch=1\n")
    alone = _report(capsys, root / "a" / "run.sh")
    both = _report(capsys, root / "a" / "run.sh", root / "b" / "run.sh")
    severities = {(os.path.basename(os.path.dirname(f["path"])), f["severity"]) for f in both[1]["findings"]}
    assert alone[0] == 0 and [f["severity"] for f in alone[1]["findings"]] == ["warning"]
    assert both[0] == 0 and severities == {("a", "warning"), ("b", "info")}
    code = main(["--show-settings", str(root / "a" / "run.sh"), str(root / "b" / "run.sh")])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and len(out) == 2
    assert f"[tool.validate-scripts] in {root / 'a' / 'pyproject.toml'}: severity = " in out[0]


def test_an_entry_that_runs_a_worker_of_its_own_is_not_judged_by_verls_workers(tmp_path, capsys):
    """verl-recipe's dance_grpo: its entry builds `DiffusionActorRolloutWorker(Worker, ...)`, which
    never converts `actor_rollout_ref.model` into verl's HFModelConfig: a field that dataclass
    lacks is an info there (a worker subclassing verl's own inherits the conversion: an error)."""
    root = _repo(tmp_path)
    _write(root / "dance" / "__init__.py", "")
    _write(root / "dance" / "main_dance.py", HYDRA_APP.format(path="config", name="dance_trainer"))
    _write(root / "dance" / "config" / "dance_trainer.yaml", EXTENDS_VERL)
    workers = root / "dance" / "diffusion_workers.py"
    _write(workers, "from verl.single_controller.base import Worker\n\n\nclass DiffusionWorker(Worker):\n    pass\n")
    script = _write(
        root / "run.sh",
        f"python3 -m dance.main_dance {LAUNCH_ARGS} model_engine=dp +actor_rollout_ref.model.latent_w=64\n",
    )
    code, doc = _report(capsys, script)
    found = [f for f in doc["findings"] if f["rule"] == "config-field"]
    assert code == 0 and found and {f["severity"] for f in found} == {"info"}, doc["findings"]
    assert "DiffusionWorker (diffusion_workers.py:4)" in found[0]["message"]
    workers.write_text("from verl.workers.fsdp_workers import ActorRolloutRefWorker\n\n\nclass W(ActorRolloutRefWorker):\n    pass\n")
    code, doc = _report(capsys, script)
    assert code == 1 and {f["severity"] for f in doc["findings"] if f["rule"] == "config-field"} == {"error"}


def test_a_subpackage_named_verl_of_the_project_is_its_own_and_a_uv_git_source_pins(tmp_path, capsys):
    """NovaSky-AI/SkyRL: `uv run -m skyrl_agent.integrations.verl.verl_main_ppo` is the project's
    module (its `verl` subpackage is no copy of verl), and `[tool.uv.sources] verl = { git = ...,
    rev = "main" }` pins a branch: unchecked, saying so, never the installed verl."""
    root = _repo(tmp_path)
    _write(root / "pyproject.toml", '[tool.uv.sources]\nverl = { git = "https://github.com/x/verl-fork", rev = "main" }\n')
    folder = root / "skyrl_agent" / "integrations" / "verl"
    for f in (root / "skyrl_agent", root / "skyrl_agent" / "integrations", folder):
        _write(f / "__init__.py", "")
    _write(folder / "verl_main_ppo.py", HYDRA_APP.format(path="config", name="trainer"))
    _write(folder / "config" / "trainer.yaml", EXTENDS_VERL)
    script = _write(root / "run.sh", f"uv run --isolated -m skyrl_agent.integrations.verl.verl_main_ppo {LAUNCH_ARGS}\n")
    code, doc = _report(capsys, script)
    (launch,) = _launches(doc)
    assert code == 0 and doc["findings"] == [] and "pinned to main, pyproject.toml:2" in launch["unchecked"]


def test_a_page_that_runs_the_script_from_a_verl_checkout_leaves_it_unchecked(tmp_path, capsys):
    """Ascend/MindSpeed's tests_extend/system_tests/verl: the README beside the script says `cd
    verl` then `bash qw3-30bmoe-grpo-2node_base.sh`: it runs in a checkout of verl that is not in
    this repository, whose `verl` it imports first. Unchecked, saying so, never the installed verl."""
    root = _repo(tmp_path)
    folder = root / "tests_extend" / "system_tests" / "verl"
    _write(folder / "README.md", "```bash\n# from the verl checkout\ncd verl\nnohup bash run_qw3.sh > log 2>&1 &\n```\n")
    script = _write(folder / "run_qw3.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} {KEY}\n")
    code, doc = _report(capsys, script)
    (launch,) = _launches(doc)
    assert code == 0 and "README.md:4 runs this script from tests_extend/system_tests/verl/verl/" in launch["unchecked"]


def test_a_page_that_names_the_pin_as_code_pins_it(tmp_path, capsys, monkeypatch):
    """AgentR1/Agent-R1's README: "the current version requires `verl==0.7.0`" (prose, the pin as
    code): that release, not the installed verl."""
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", _wheels())
    root = _repo(tmp_path)
    _write(root / "README.md", "Agent-R1 uses verl's environment, and requires **`verl==0.8.0`**.\n")
    script = _write(root / "run.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} trainer.total_epochs=2\n")
    code, doc = _report(capsys, script)
    assert _verls(doc) == {("pinned, README.md:1: the release's wheel", "0.8.0")}


def test_with_no_repository_marker_the_verl_a_folder_above_holds_is_the_one(tmp_path, capsys):
    """../shared/corpus/verl-v0.7.0: verl's package and its examples with no .git, pyproject.toml or
    setup.py: a script run from any folder above it imports the verl there, as before this issue
    (the walk stopped at the script's own folder, and 181 launches were checked against 0.9.1)."""
    tree = tmp_path / "copy"
    _verl(tree, "0.7.0.dev")
    (tree / "setup.py").unlink()
    script = _write(tree / "examples" / "grpo" / "run.sh", f"python3 -m verl.trainer.main_ppo {LAUNCH_ARGS} {KEY}\n")
    code, doc = _report(capsys, script)
    ((origin, version),) = _verls(doc)
    assert code == 1 and version == "0.7.0.dev" and origin.startswith("vendored"), origin
    (tree / "examples" / "grpo" / "split.sh").write_text("python3 main_ppo_split.py trainer.total_epochs=2\n")
    code, doc = _report(capsys, tree / "examples" / "grpo" / "split.sh")
    assert "a Python program that is not here" in doc["scripts"][0]["no_launch"]["message"]
