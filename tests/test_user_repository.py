"""At home in a user's repository (issue 43): what a project built on verl needs of the tool.

Each test builds the pattern it names in a folder of its own (a project's layout, its pins,
its entry module, its wrapper scripts), as the public projects have it, and runs the command
as a user runs it.
"""

from __future__ import annotations

import json
import os
import shutil

from verl_preflight.app.cli import main

LAUNCH = (
    "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1"
)


def _report(capsys, *args) -> tuple[int, dict]:
    code = main(["--no-cache", "--format", "json", *map(str, args)])
    return code, json.loads(capsys.readouterr().out)


def _rules(doc: dict) -> list[tuple[int, str, str]]:
    return sorted((f["line"], f["rule"], f["severity"]) for f in doc["findings"])


# ---- style lints are opt-in --------------------------------------------------------------


def test_a_launch_without_the_scripts_arguments_is_no_finding_unless_turned_on(tmp_path, capsys):
    script = tmp_path / "run.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH}\n")
    code, doc = _report(capsys, script)
    assert (code, _rules(doc)) == (0, [])
    code, doc = _report(capsys, "--enable", "launch-passes-args", script)
    assert (code, _rules(doc)) == (0, [(2, "launch-passes-args", "warning")])


def test_a_script_that_reads_its_own_arguments_is_never_asked_to_forward_them(tmp_path, capsys):
    for reads in (
        'MODEL="$1"',
        "MODEL=${1:-Qwen/Qwen3-8B}",
        "shift",
        'while getopts "m:" o; do :; done',
        '[ "$#" -gt 0 ] && echo "$#"',
    ):
        script = tmp_path / "run.sh"
        script.write_text(f"#!/usr/bin/env bash\n{reads}\n{LAUNCH}\n")
        assert _rules(_report(capsys, "--enable", "launch-passes-args", script)[1]) == [], reads


def test_enable_names_a_rule(tmp_path, capsys):
    script = tmp_path / "run.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH}\n")
    assert main(["--enable", "launch-passes-arg", str(script)]) == 2
    assert "--enable: no rule 'launch-passes-arg' (did you mean 'launch-passes-args'?)" in capsys.readouterr().err


def test_the_rule_list_says_which_rules_are_off(capsys):
    main(["--list-rules"])
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("launch-passes-args "))
    assert line.split()[1] == "off"
    main(["--explain", "launch-passes-args"])
    assert "(off (opt-in, warning), policy)" in capsys.readouterr().out


# ---- the same verl for every -j ----------------------------------------------------------


def test_every_worker_checks_against_the_verl_the_run_names(tmp_path, capsys):
    """A verl vendored beside the scripts and the --verl-config tree differ: with -j 2 the workers
    check against the tree the command line names, as -j 1 does (they looked beside each script)."""
    import shutil

    from verl_preflight.core.config_location import installed_root
    from verl_preflight.app.runner import SERIAL_BELOW

    vendored = tmp_path / "proj" / "verl" / "trainer" / "config"
    shutil.copytree(os.path.join(installed_root(), "trainer", "config"), vendored)
    text = (vendored / "ppo_trainer.yaml").read_text()
    (vendored / "ppo_trainer.yaml").write_text(text.replace("  total_epochs:", "  total_epoch_count:", 1))
    (tmp_path / "proj" / "verl" / "__init__.py").write_text("")  # a package: what `import verl` there loads
    (tmp_path / "proj" / ".git").mkdir()
    for i in range(max(SERIAL_BELOW, 2)):
        (tmp_path / "proj" / f"run_{i}.sh").write_text(f"#!/usr/bin/env bash\n{LAUNCH} trainer.total_epochs=2\n")
    given = os.path.join(installed_root(), "trainer", "config")
    docs = []
    for jobs in ("1", "2"):
        code, doc = _report(capsys, "-j", jobs, "--verl-config", given, tmp_path / "proj")
        origins = {
            la["target"]["verl"]["origin"] for s in doc["scripts"] for p in s["profiles"] for la in p["launches"]
        }
        docs.append((code, origins, _rules(doc)))
    assert docs[0] == docs[1] == (0, {"--verl-config"}, [])
    code, doc = _report(capsys, "-j", "2", tmp_path / "proj")  # no flag: the project's own verl
    assert code == 1 and {r for _, r, _ in _rules(doc)} == {"override-missing-key"}


# ---- which verl: flags that disagree, none installed ---------------------------------------


def _tree():
    from verl_preflight.core.config_location import installed_root

    return os.path.join(installed_root(), "trainer", "config")


def test_two_verls_named_are_a_usage_error_naming_both(tmp_path, capsys, monkeypatch):
    script = tmp_path / "run.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH}\n")
    assert main(["--verl", "0.9.1", "--verl-config", _tree(), str(script)]) == 2
    err = capsys.readouterr().err
    assert f"--verl 0.9.1 and --verl-config {_tree()} name two verl config trees: give one" in err
    monkeypatch.setenv("VERL_CONFIG_DIR", str(tmp_path))
    assert main(["--verl-config", _tree(), str(script)]) == 2
    assert f"--verl-config {_tree()} and VERL_CONFIG_DIR={tmp_path} name two" in capsys.readouterr().err
    monkeypatch.setenv("VERL_CONFIG_DIR", _tree())  # the same tree twice: no disagreement
    assert main(["--no-cache", "--verl-config", _tree(), str(script)]) == 0
    capsys.readouterr()
    monkeypatch.delenv("VERL_CONFIG_DIR")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f'[tool.validate-scripts]\nverl = "0.9.1"\nverl-config = "{_tree()}"\n')
    assert main([str(script)]) == 2
    assert "verl and verl-config name two verl config trees" in capsys.readouterr().err
    assert main(["--no-cache", "--verl-config", _tree(), str(script)]) == 0  # the command line wins over both


def test_with_no_verl_installed_the_newest_known_release_is_fetched(tmp_path, capsys, monkeypatch):
    from conftest import ROOT

    import verl_preflight.core.config_location as location

    wheels = os.path.join(ROOT, ".venv", "wheels")
    if not os.path.isdir(wheels):
        import pytest

        pytest.skip("make has not downloaded the verl wheels (.venv/wheels)")
    monkeypatch.setattr(location, "installed_root", lambda: None)
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", wheels)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    script = tmp_path / "run.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH} trainer.total_epoch=1\n")
    code, doc = _report(capsys, script)
    assert code == 1 and [r for _, r, _ in _rules(doc)] == ["override-missing-key"]
    assert doc["config_source"]["verl_version"] == location.DEFAULT_RELEASE
    (verl,) = {la["target"]["verl"]["origin"] for p in doc["scripts"][0]["profiles"] for la in p["launches"]}
    assert verl == f"no verl installed: the release {location.DEFAULT_RELEASE}'s wheel"


# ---- an edit to a sourced helper re-checks the scripts that read it ------------------------


def test_dependents_are_the_scripts_whose_check_read_the_helper(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / "common.sh").write_text("EPOCHS=(trainer.total_epoch=1)\n")
    (tmp_path / "run.sh").write_text(
        f'#!/usr/bin/env bash\nsource "$(dirname "$0")/common.sh"\n{LAUNCH} "${{EPOCHS[@]}}"\n'
    )
    (tmp_path / "notes.sh").write_text("#!/usr/bin/env bash\n# common.sh is not sourced here\necho done\n")
    code, doc = _report(capsys, tmp_path / "common.sh")
    assert code == 0 and [s["path"] for s in doc["scripts"]] == [str(tmp_path / "common.sh")]
    code = main(["--no-cache", "--format", "json", "--dependents", str(tmp_path / "common.sh")])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert code == 1 and "run.sh: checked too: it reads" in err
    assert sorted(os.path.basename(s["path"]) for s in doc["scripts"]) == ["common.sh", "run.sh"]
    assert [(os.path.basename(f["path"]), f["line"], f["rule"]) for f in doc["findings"]] == [
        ("common.sh", 1, "override-missing-key")
    ]
    helper = next(s for s in doc["scripts"] if s["path"].endswith("common.sh"))
    assert "read by" in helper["no_launch"]["message"]


# ---- the project's own entry points --------------------------------------------------------

ENTRY = """\
import hydra


@hydra.main(config_path="config", config_name="trainer", version_base=None)
def main(config):
    run(config)
"""
ROOT_CONFIG = """\
hydra:
  searchpath:
    - pkg://verl/trainer/config

defaults:
  - ppo_trainer
  - _self_

myproj:
  reward_port: 9999
"""
PROJECT_LAUNCH = (
    "algorithm.adv_estimator=grpo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1"
)


def _project(tmp_path, entry=ENTRY, config=ROOT_CONFIG):
    """A repository with its own package `myproj` whose module `main` is a Hydra app extending verl's."""
    root = tmp_path / "proj"
    (root / "myproj" / "config").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "myproj"\n')
    (root / "myproj" / "__init__.py").write_text("")
    (root / "myproj" / "main.py").write_text(entry)
    (root / "myproj" / "config" / "trainer.yaml").write_text(config)
    (root / "scripts").mkdir()
    return root


def _script(root, text: str, name: str = "scripts/train.sh"):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + text)
    return path


def _launches(doc: dict) -> list[dict]:
    return [la for s in doc["scripts"] for p in s["profiles"] for la in p["launches"]]


def test_a_projects_own_hydra_app_is_a_checked_launch(tmp_path, capsys):
    root = _project(tmp_path)
    script = _script(root, f"python3 -m myproj.main {PROJECT_LAUNCH} myproj.reward_port=1 trainer.total_epoch=2\n")
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [(2, "override-missing-key", "error")]
    assert "did you mean 'trainer.total_epochs'" in doc["findings"][0]["message"]
    (launch,) = _launches(doc)
    assert (launch["module"], launch["config_name"]) == ("myproj.main", "trainer")
    assert launch["target"]["config"]["checked"] and launch["target"]["config"]["folders"][0].endswith("myproj/config")
    fixed = _script(root, f"python3 -m myproj.main {PROJECT_LAUNCH} myproj.reward_port=1 trainer.total_epochs=2\n")
    assert _report(capsys, fixed)[0] == 0


def test_a_package_run_as_a_program_is_followed_to_its_hydra_app(tmp_path, capsys):
    root = _project(tmp_path)
    (root / "myproj" / "__main__.py").write_text("from .main import main\n\nif __name__ == '__main__':\n    main()\n")
    script = _script(root, f"python -m myproj {PROJECT_LAUNCH} myproj.reward_prot=1\n")
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [(2, "override-missing-key", "error")]
    assert "myproj.reward_port" in doc["findings"][0]["message"]


def test_a_python_file_with_a_hydra_app_is_a_checked_launch(tmp_path, capsys):
    """`python grl/train.py --config-name base` run from the root (the file's @hydra.main names
    a config folder beside the package: config_path="../configs")."""
    root = _project(tmp_path, entry=ENTRY.replace('config_path="config"', 'config_path="../configs"'))
    (root / "configs").mkdir()
    (root / "configs" / "base.yaml").write_text(ROOT_CONFIG)
    (root / "train.py").write_text(ENTRY.replace('config_path="config"', 'config_path="configs"'))
    script = _script(
        root, f'cd "$(dirname "$0")/.."\npython train.py --config-name base {PROJECT_LAUNCH} myproj.port=1\n'
    )
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [(3, "override-missing-key", "error")]
    (launch,) = _launches(doc)
    assert launch["module"] == "train.py" and launch["config_name"] == "base"


def test_a_module_that_is_no_hydra_app_stays_a_python_program(tmp_path, capsys):
    root = _project(tmp_path, entry="import argparse\nargparse.ArgumentParser().parse_args()\n")
    script = _script(root, f"python3 -m myproj.main {PROJECT_LAUNCH}\n")
    code, doc = _report(capsys, script)
    assert code == 0 and _launches(doc) == [] and doc["scripts"][0]["no_launch"] is not None


def test_a_computed_config_path_says_why_it_is_not_checked(tmp_path, capsys):
    entry = ENTRY.replace('config_path="config"', "config_path=os.environ['CONF']")
    root = _project(tmp_path, entry=entry)
    script = _script(root, f"python3 -m myproj.main {PROJECT_LAUNCH} trainer.total_epoch=2\n")
    code, doc = _report(capsys, script)
    (launch,) = _launches(doc)
    assert code == 0 and "@hydra.main's config_path at main.py:4 is computed" in launch["unchecked"]


# ---- the verl the project runs ---------------------------------------------------------------


def _verl_package(folder, version="0.9.1.dev", drop="  total_epochs:"):
    """A verl package (its config tree, its version file) under `folder`, whose ppo_trainer lacks
    trainer.total_epochs: a launch that sets it is refused there and nowhere else."""
    import shutil

    package = folder / "verl"
    shutil.copytree(os.path.join(_tree()), package / "trainer" / "config")
    (package / "__init__.py").write_text("")
    (package / "version").mkdir()
    (package / "version" / "version").write_text(version + "\n")
    yaml = package / "trainer" / "config" / "ppo_trainer.yaml"
    yaml.write_text(yaml.read_text().replace(drop, "  total_epoch_count:", 1))
    return package


VERL_LAUNCH = f"{LAUNCH} trainer.total_epochs=2\n"


def _origin(doc: dict) -> tuple:
    (verl,) = {(la["target"]["verl"]["origin"], la["target"]["verl"]["version"]) for la in _launches(doc)}
    return verl


def test_a_verl_kept_as_a_git_submodule_is_the_one_checked_against(tmp_path, capsys):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / ".gitmodules").write_text(
        '[submodule "third_party/verl"]\n\tpath = third_party/verl\n\turl = ../verl.git\n'
    )
    _verl_package(root / "third_party" / "verl")
    script = _script(root, VERL_LAUNCH)
    code, doc = _report(capsys, script)
    assert code == 1 and [r for _, r, _ in _rules(doc)] == ["override-missing-key"]
    assert _origin(doc) == ("git submodule third_party/verl, third_party/verl/verl", "0.9.1.dev")
    # the project's own entry runs the same verl: its pkg://verl search path is that checkout's
    (root / "myproj" / "config").mkdir(parents=True)
    (root / "myproj" / "__init__.py").write_text("")
    (root / "myproj" / "main.py").write_text(ENTRY)
    (root / "myproj" / "config" / "trainer.yaml").write_text(ROOT_CONFIG)
    script = _script(root, f"python3 -m myproj.main {PROJECT_LAUNCH} trainer.total_epochs=2\n")
    code, doc = _report(capsys, script)
    assert code == 1 and [r for _, r, _ in _rules(doc)] == ["override-missing-key"]
    assert _launches(doc)[0]["target"]["config"]["folders"][1].endswith("third_party/verl/verl/trainer/config")


def test_a_submodule_not_checked_out_leaves_the_launch_unchecked_and_says_why(tmp_path, capsys):
    root = tmp_path / "proj"
    (root / "verl").mkdir(parents=True)  # the submodule's empty folder, as a clone without --recursive has it
    (root / "pyproject.toml").write_text("")
    (root / ".gitmodules").write_text('[submodule "verl"]\n\tpath = verl\n\turl = https://github.com/volcengine/verl\n')
    script = _script(root, f"{LAUNCH} trainer.total_epoch=2\n")
    code, doc = _report(capsys, script)
    assert code == 0 and _rules(doc) == []
    (launch,) = _launches(doc)
    assert "git submodule verl, not checked out here (git submodule update --init)" in launch["unchecked"]


def test_a_verl_clone_the_setup_installs_but_that_is_not_here_leaves_the_launch_unchecked(tmp_path, capsys):
    """yuzhaouoe/GUI-Cursor-Moving: scripts/verl_env2.sh clones the project's verl fork and runs
    `pip install -e ./verl`; in a clone of the repository that folder is not there. The launch is
    not checked against the installed verl: it says which verl it runs and that it is not here."""
    root = tmp_path / "proj"
    (root / "scripts").mkdir(parents=True)
    (root / "setup.py").write_text("")
    setup = "git clone https://github.com/someone/verl.git\npip install -e .\npip install -e ./verl\n"
    (root / "scripts" / "verl_env2.sh").write_text(setup)
    script = _script(root, f"{LAUNCH} trainer.total_epoch=2\n")
    code, doc = _report(capsys, script)
    assert code == 0 and _rules(doc) == []
    (launch,) = _launches(doc)
    assert "verl is verl/, installed by scripts/verl_env2.sh:3 with pip install -e, and verl/verl is not here" in (
        launch["unchecked"]
    )
    # once the clone is there, it is the verl checked
    _verl_package(root / "verl")
    code, doc = _report(capsys, script)
    assert code == 1 and [r for _, r, _ in _rules(doc)] == ["override-missing-key"]
    assert _origin(doc)[0] == "installed by scripts/verl_env2.sh:3, verl/verl"
    # a folder installed so that does not name verl is no verl of the project's
    (root / "scripts" / "verl_env2.sh").write_text("pip install -e ./cursor_tools\n")
    shutil.rmtree(root / "verl")
    code, doc = _report(capsys, script)
    assert code == 1 and _origin(doc)[0] == "installed"


def test_a_projects_app_whose_config_folder_is_not_here_says_so_and_not_that_its_module_is_missing(tmp_path, capsys):
    """The project's own Hydra app (myproj/main.py) launched with `--config-path` an absolute
    folder of the training machine: the reason given is that folder, not the module."""
    root = _project(tmp_path)
    script = _script(root, f"python3 -m myproj.main --config-path=/mnt/ceph/proj/config {PROJECT_LAUNCH}\n")
    code, doc = _report(capsys, script)
    (launch,) = _launches(doc)
    assert code == 0 and "/mnt/ceph/proj/config" in launch["unchecked"], launch["unchecked"]
    assert "has no source here" not in launch["unchecked"]


def test_hydras_own_warnings_on_a_vendored_tree_are_not_printed_by_the_check(tmp_path):
    """ByteDance-BandAI/LLM-I vendors a ppo_trainer.yaml whose defaults list has no `_self_`: Hydra
    warns when it composes it (UserWarning, with a path into site-packages). The check prints its
    findings only; run as a user runs it (pytest's own capture of warnings would hide the print)."""
    import subprocess
    import sys

    root = tmp_path / "proj"
    root.mkdir()
    (root / "setup.py").write_text("")
    _verl_package(root)
    config = root / "verl" / "trainer" / "config" / "ppo_trainer.yaml"
    config.write_text(config.read_text().replace("  - _self_\n", "", 1))
    script = _script(root, f"{LAUNCH} trainer.total_epoch=2\n")
    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "validate_scripts.py")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, tool, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1 and "override-missing-key" in proc.stdout, proc.stdout + proc.stderr
    assert "Warning" not in proc.stderr and "_self_" not in proc.stderr, proc.stderr


def test_a_verl_vendored_at_the_root_is_found_from_any_folder_of_the_project(tmp_path, capsys):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "setup.py").write_text("")
    _verl_package(root)
    code, doc = _report(capsys, _script(root, VERL_LAUNCH, "examples/deep/er/run.sh"))
    origin, version = _origin(doc)
    assert code == 1 and origin.startswith("vendored, ") and origin.endswith("proj/verl") and version == "0.9.1.dev"


def _wheels():
    from conftest import ROOT

    wheels = os.path.join(ROOT, ".venv", "wheels")
    if not os.path.isfile(os.path.join(wheels, "verl-0.8.0-py3-none-any.whl")):
        import pytest

        pytest.skip("make has not downloaded the verl wheels (.venv/wheels)")
    return wheels


NEW_IN_091 = "actor_rollout_ref.actor.fsdp_config.turbo_config.distributed.expert_parallel_size=1"  # not in 0.8.0


def test_a_release_pinned_by_a_setup_script_is_fetched_and_checked_against(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", _wheels())
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "scripts").mkdir()
    (root / "scripts" / "setup_gpu.sh").write_text("pip install torch==2.7.0\npip install --no-cache-dir verl==0.8.0\n")
    script = _script(root, f"{LAUNCH} {NEW_IN_091}\n", "train.sh")
    code, doc = _report(capsys, script)
    assert code == 1 and [r for _, r, _ in _rules(doc)] == ["override-missing-key"]
    assert _origin(doc) == ("pinned, scripts/setup_gpu.sh:2: the release's wheel", "0.8.0")
    assert _report(capsys, "--verl", "0.9.1", script)[0] == 0  # named on the command line: that one


def test_requirements_and_pyproject_pins_are_read(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", _wheels())
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "requirements.txt").write_text("torch==2.7.0\nverl[vllm]==0.8.0\n")
    script = _script(root, f"{LAUNCH} {NEW_IN_091}\n", "train.sh")
    code, doc = _report(capsys, script)
    assert code == 1 and _origin(doc)[1] == "0.8.0"
    (root / "requirements.txt").unlink()
    (root / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["verl==0.8.0", "verl-tools==1.0"]\n')
    code, doc = _report(capsys, script)
    assert code == 1 and _origin(doc) == ("pinned, pyproject.toml:3: the release's wheel", "0.8.0")


def test_a_verl_pinned_to_a_git_reference_is_not_checked_against_another(tmp_path, capsys):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "install.sh").write_text("git clone https://github.com/volcengine/verl\ncd verl\ngit checkout 1dda039b9\n")
    script = _script(root, f"{LAUNCH} trainer.total_epoch=2\n", "train.sh")
    code, doc = _report(capsys, script)
    (launch,) = _launches(doc)
    assert code == 0 and "installs verl at commit 1dda039b9 (pinned to commit 1dda039b9, install.sh:3), not at hand here" in launch["unchecked"]


# ---- inputs are inputs, slips are slips -------------------------------------------------------


def test_a_variable_the_repository_documents_is_an_input_not_a_warning(tmp_path, capsys):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "README.md").write_text("Run it:\n\n```bash\nexport N_GPUS=8\nbash scripts/train.sh\n```\n")
    script = _script(
        root,
        f"export DATA_DIR=/data\n{LAUNCH} trainer.n_gpus_per_node=$N_GPUS "
        "data.train_files=$TRAIN_DATA_DIR/train.parquet\n",
    )
    code, doc = _report(capsys, script)
    assert _rules(doc) == [(3, "unassigned-variable", "warning")]
    message = doc["findings"][0]["message"]
    assert message.startswith("TRAIN_DATA_DIR is never assigned") and message.endswith("; the script sets DATA_DIR")
    assert doc["scripts"][0]["inputs"] == [{"name": "N_GPUS", "where": "README.md:4"}]
    main(["--no-cache", str(script)])
    assert "scripts/train.sh: note: inputs from the environment: N_GPUS (README.md:4)" in capsys.readouterr().out


def test_a_wrapper_and_ci_files_give_inputs_too(tmp_path, capsys):
    root = tmp_path / "proj"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / ".github" / "workflows" / "train.yml").write_text(
        "jobs:\n  t:\n    env:\n      BASE_MODEL: Qwen/Qwen3-8B\n"
    )
    (root / "launch.sh").write_text("export N_NODES=2\nbash scripts/inner.sh\n")
    script = _script(
        root, f"{LAUNCH} trainer.nnodes=$N_NODES actor_rollout_ref.model.path=$BASE_MODEL\n", "scripts/inner.sh"
    )
    code, doc = _report(capsys, script)
    assert _rules(doc) == []
    inputs = {i["name"]: i["where"] for s in doc["scripts"] for i in s["inputs"]}
    assert inputs == {"N_NODES": "launch.sh:1", "BASE_MODEL": ".github/workflows/train.yml:4"}


def test_a_wrapper_run_from_anywhere_is_followed_with_what_it_exports(tmp_path, capsys):
    """`bash scripts/inner.sh` in a wrapper at the root: found from the repository's root, followed
    with the wrapper's exports (a typo in the inner launch is found through the wrapper)."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "launch.sh").write_text("#!/usr/bin/env bash\nexport EPOCHS=2\nbash scripts/inner.sh\n")
    _script(root, f"{LAUNCH} trainer.total_epoch=$EPOCHS\n", "scripts/inner.sh")
    code, doc = _report(capsys, root / "launch.sh")
    (launch,) = _launches(doc)
    assert code == 1 and "trainer.total_epoch=2" in launch["overrides"]


# ---- false classes seen on public projects, each at its cause ------------------------------


def test_a_boolean_key_the_projects_code_reads_as_a_string_selector_is_no_type_error(tmp_path, capsys):
    """The project's YAML has `recurrent.enable: false`; its scripts set `recurrent.enable=memory`;
    its code tests the key for truth and compares it with "memory": the launch runs as intended."""
    config = ROOT_CONFIG + "recurrent:\n  enable: false\n"
    code_reading = (
        "\n\ndef run(config):\n    if config.recurrent.enable:\n        return MODES[config.recurrent.enable]\n"
    )
    root = _project(tmp_path, entry=ENTRY + code_reading, config=config)
    script = _script(root, f"python3 -m myproj.main {PROJECT_LAUNCH} recurrent.enable=memory\n")
    assert _rules(_report(capsys, script)[1]) == []
    # the same key where nothing reads it as a string: a string in a boolean's place is said
    root = _project(tmp_path / "other", entry=ENTRY, config=config)
    script = _script(root, f"python3 -m myproj.main {PROJECT_LAUNCH} recurrent.enable=memory\n")
    assert [r for _, r, _ in _rules(_report(capsys, script)[1])] == ["config-type"]


def test_a_verl_whose_version_is_not_known_is_said_so_in_every_message():
    """A vendored verl without a version file: messages say "verl (version not known)", never "verl ?"."""
    from verl_preflight.hydra_stage.tree import ConfigSource
    from verl_preflight.rules.view import LaunchView

    view = LaunchView(None, "ppo_trainer", None, [], {})
    view.source = ConfigSource("/nowhere", None, None, "vendored, verl")
    assert f"verl {view.verl_version} tests it" == "verl (version not known) tests it"
    view.source = ConfigSource("/nowhere", "0.5.0.dev", None, "vendored, verl")
    assert view.verl_version == "0.5.0.dev"


def test_a_validation_only_launch_checks_no_training_budget(tmp_path, capsys):
    """trainer.val_only=True: verl's fit returns after its first validation (ray_trainer.py, read
    from the launch's verl), so no update splits a batch by ppo_max_token_len_per_gpu."""
    lengths = (
        "data.max_prompt_length=2048 data.max_response_length=30720 actor_rollout_ref.actor.use_dynamic_bsz=True "
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=20480"
    )
    script = tmp_path / "eval.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH} {lengths}\n")
    assert [r for _, r, _ in _rules(_report(capsys, script)[1])] == ["sequence-length"]
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH} {lengths} trainer.val_only=True\n")
    assert _rules(_report(capsys, script)[1]) == []
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH} {lengths} trainer.val_only=True trainer.val_before_train=False\n")
    assert [r for _, r, _ in _rules(_report(capsys, script)[1])] == ["sequence-length"]


def test_a_forks_own_trainer_module_with_its_own_config_folder_is_its_entry(tmp_path, capsys):
    """`python3 -m verl.agent_trainer.main_ppo` where the project's verl fork adds agent_trainer/ with
    its own @hydra.main and config folder: read there, not refused as a module verl lacks."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "setup.py").write_text("")
    package = _verl_package(root, drop="no such line")
    (package / "agent_trainer" / "config").mkdir(parents=True)
    (package / "agent_trainer" / "__init__.py").write_text("")
    (package / "agent_trainer" / "main_ppo.py").write_text(ENTRY.replace('"trainer"', '"agent_trainer"'))
    (package / "agent_trainer" / "config" / "agent_trainer.yaml").write_text(
        ROOT_CONFIG.replace("myproj:\n  reward_port: 9999", "agent:\n  max_turns: 4")
    )
    script = _script(root, f"python3 -m verl.agent_trainer.main_ppo {PROJECT_LAUNCH} agent.max_turn=3\n")
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [(2, "override-missing-key", "error")]
    assert "did you mean 'agent.max_turns'" in doc["findings"][0]["message"]


# ---- patterns of public projects built on verl, rebuilt as fixtures of our own -------------
# (read with the search tools: TinyZero, verl-tool, RAGEN, rllm, EasyR1; their layouts, not their files)


def test_tinyzero_the_repository_is_a_verl_fork_and_its_readme_gives_the_inputs(tmp_path, capsys):
    """Jiayi-Pan/TinyZero: setup.py names the package verl, verl/ sits at the root; the README says to
    `export N_GPUS=1`, BASE_MODEL, DATA_DIR, ROLLOUT_TP_SIZE, EXPERIMENT_NAME before `bash
    ./scripts/train_tiny_zero.sh`, which reads them unset."""
    root = tmp_path / "TinyZero"
    root.mkdir()
    (root / "setup.py").write_text("from setuptools import setup\nsetup(name='verl')\n")
    _verl_package(root, version="0.0.2")
    exports = ("N_GPUS=1", "BASE_MODEL=Qwen/Qwen2.5-3B", "DATA_DIR=data", "ROLLOUT_TP_SIZE=1", "EXPERIMENT_NAME=x")
    (root / "README.md").write_text("## Run\n```\n" + "".join(f"export {e}\n" for e in exports) + "```\n")
    reads = (
        "data.train_files=$DATA_DIR/train.parquet actor_rollout_ref.model.path=$BASE_MODEL "
        "actor_rollout_ref.rollout.tensor_model_parallel_size=$ROLLOUT_TP_SIZE trainer.n_gpus_per_node=$N_GPUS "
        "trainer.experiment_name=$EXPERIMENT_NAME"
    )
    script = _script(root, f"{LAUNCH} {reads} trainer.total_epochs=15 2>&1 | tee verl_demo.log\n", "scripts/train.sh")
    code, doc = _report(capsys, script)
    assert code == 1 and [r for _, r, _ in _rules(doc)] == ["override-missing-key"]  # the fork lacks total_epochs
    assert {i["name"] for i in doc["scripts"][0]["inputs"]} == {e.split("=")[0] for e in exports}


def test_verl_tool_an_own_trainer_package_with_verls_config_copied_in(tmp_path, capsys):
    """TIGER-AI-Lab/verl-tool: verl is a submodule at verl/ (installed with `pip install -e verl`), the
    project's verl_tool/trainer/main_ppo.py has @hydra.main(config_path="config",
    config_name="ppo_trainer") over a copy of verl's config folder with an agent section added;
    the script starts a tool server in the background first."""
    import shutil

    root = tmp_path / "verl-tool"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "verl-tool"\n')
    (root / ".gitmodules").write_text('[submodule "verl"]\n\tpath = verl\n\turl = https://github.com/volcengine/verl\n')
    _verl_package(root / "verl", version="0.4.1.dev", drop="no such line")
    config = root / "verl_tool" / "trainer" / "config"
    shutil.copytree(_tree(), config)
    (config / "ppo_trainer.yaml").write_text(
        (config / "ppo_trainer.yaml")
        .read_text()
        .replace("actor_rollout_ref:\n", "actor_rollout_ref:\n  agent:\n    max_turns: 1\n    enable_agent: false\n", 1)
    )
    (root / "verl_tool" / "__init__.py").write_text("")
    (root / "verl_tool" / "trainer" / "__init__.py").write_text("")
    (root / "verl_tool" / "trainer" / "main_ppo.py").write_text(ENTRY.replace('"trainer"', '"ppo_trainer"'))
    script = _script(
        root,
        "python -m verl_tool.servers.serve --tool_type python_code &\nserver_pid=$!\n"
        f"python3 -m verl_tool.trainer.main_ppo {PROJECT_LAUNCH} actor_rollout_ref.agent.max_turns=2 "
        "actor_rollout_ref.agent.enable_agent=True trainer.total_epoch=1\npkill -P -9 $server_pid\n",
        "examples/train/train.sh",
    )
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [(4, "override-missing-key", "error")]
    (launch,) = _launches(doc)
    assert launch["target"]["verl"]["origin"] == "git submodule verl, verl/verl"


def test_ragen_a_python_file_whose_config_chains_a_base_with_a_symlinked_ppo_trainer(tmp_path, capsys):
    """RAGEN: `python train.py --config-name _6_webshop`; config/_6_webshop.yaml has `defaults: [base]`,
    base.yaml `defaults: [ppo_trainer, envs]` where config/ppo_trainer.yaml is a symlink into the
    submodule's config folder; top-level keys feed verl's by interpolation; override bundles are
    unquoted variables (bash splits them into words), two launches run in the background."""
    root = tmp_path / "RAGEN"
    (root / "config").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".gitmodules").write_text('[submodule "verl"]\n\tpath = verl\n\turl = https://github.com/volcengine/verl\n')
    _verl_package(root / "verl", drop="no such line")
    (root / "train.py").write_text(ENTRY.replace('"trainer"', '"base"'))
    (root / "config" / "ppo_trainer.yaml").symlink_to("../verl/verl/trainer/config/ppo_trainer.yaml")
    (root / "config" / "envs.yaml").write_text("es_manager:\n  train:\n    env_groups: 8\n")
    (root / "config" / "base.yaml").write_text(
        "defaults:\n  - ppo_trainer\n  - envs\n  - _self_\nmodel_path: Qwen/Qwen2.5-0.5B\n"
        "actor_rollout_ref:\n  model:\n    path: ${model_path}\n"
    )
    # (Hydra reads hydra.searchpath from the primary config only: verl's groups are found through it)
    (root / "config" / "_6_webshop.yaml").write_text(
        "hydra:\n  searchpath:\n    - file://verl/verl/trainer/config\ndefaults:\n  - base\n  - _self_\n"
    )
    launch = f"python train.py --config-name _6_webshop {PROJECT_LAUNCH} es_manager.train.env_groups=4 $USE_GRPO"
    script = _script(
        root,
        'USE_GRPO="algorithm.adv_estimator=grpo actor_rollout_ref.actor.use_kl_los=True"\n'
        f"{launch} &\n{launch} model_path=Qwen/Qwen2.5-3B &\nwait\n",
        "run.sh",
    )
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [(2, "override-missing-key", "error")]  # in the bundle: use_kl_los
    assert [la["config_name"] for la in _launches(doc)] == ["_6_webshop", "_6_webshop"]


def test_rllm_a_release_pinned_in_an_extra_and_a_config_path_of_the_projects_package(tmp_path, capsys, monkeypatch):
    """rllm: `pip install -e ".[verl]"` with `verl = ["verl==0.7.1", ...]` in pyproject's optional
    dependencies; `python -m examples.deepscaler.train_deepscaler` (a folder of the repository, no
    package) whose @hydra.main(config_path="pkg://rllm.trainer.config", ...) names the project's own
    package, whose root config reaches verl's with `searchpath: pkg://verl.trainer.config`."""
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", _wheels())
    root = tmp_path / "rllm"
    (root / "rllm" / "trainer" / "config").mkdir(parents=True)
    (root / "examples" / "deepscaler").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "rllm"\n[project.optional-dependencies]\nverl = [\n  "verl==0.8.0",\n  "vllm==0.10.0",\n]\n'
    )
    for package in ("rllm", "rllm/trainer"):
        (root / package / "__init__.py").write_text("")
    (root / "rllm" / "trainer" / "config" / "agent_ppo_trainer.yaml").write_text(
        ROOT_CONFIG.replace("pkg://verl/trainer/config", "pkg://verl.trainer.config").replace("myproj:", "rllm:")
    )
    (root / "examples" / "deepscaler" / "train_deepscaler.py").write_text(
        ENTRY.replace(
            'config_path="config", config_name="trainer"',
            'config_path="pkg://rllm.trainer.config", config_name="agent_ppo_trainer"',
        )
    )
    script = _script(
        root,
        f"python3 -m examples.deepscaler.train_deepscaler {PROJECT_LAUNCH} rllm.reward_port=1 {NEW_IN_091}\n",
        "examples/deepscaler/train_deepscaler.sh",
    )
    code, doc = _report(capsys, script)
    assert code == 1 and [r for _, r, _ in _rules(doc)] == ["override-missing-key"]  # 0.8.0 lacks the key
    assert _origin(doc) == ("pinned, pyproject.toml:5: the release's wheel", "0.8.0")


def test_easyr1_a_forks_own_non_hydra_entry_reads_its_own_arguments(tmp_path, capsys):
    """hiyouga/EasyR1: a verl fork at the root whose `python3 -m verl.trainer.main config=... key=value`
    reads its arguments with OmegaConf.from_cli, no Hydra: nothing of them is a finding, and the
    launch says why it is not checked."""
    root = tmp_path / "EasyR1"
    root.mkdir()
    (root / "setup.py").write_text("")
    package = _verl_package(root, drop="no such line")
    (package / "trainer" / "main.py").write_text(
        "from omegaconf import OmegaConf\n\n\ndef main():\n    cli_args = OmegaConf.from_cli()\n    return cli_args\n"
    )
    script = _script(
        root,
        "python3 -m verl.trainer.main config=examples/config.yaml worker.actor.model.model_path=Qwen/x\n",
        "examples/qwen2_5_7b_math_grpo.sh",
    )
    code, doc = _report(capsys, script)
    (launch,) = _launches(doc)
    assert (code, doc["findings"]) == (0, [])
    assert (
        launch["unchecked"]
        == "verl.trainer.main reads options of its own (OmegaConf.from_cli at main.py:5), not Hydra's"
    )


# ---- what was checked against, in every report -----------------------------------------------


def test_every_format_says_once_which_verl_the_launches_were_checked_against(tmp_path, capsys):
    script = tmp_path / "run.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH}\n")
    said = "checked against verl 0.9.1 (installed) (1 launch)"
    assert main(["--no-cache", str(script)]) == 0  # a clean run too
    assert f"validate-scripts: note: {said}" in capsys.readouterr().out.splitlines()
    assert main(["--no-cache", "--format", "github", str(script)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"::notice title=validate-scripts::{said}"
    assert main(["--no-cache", "--format", "sarif", str(script)]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["properties"]["checked_against"] == [{"verl": "verl 0.9.1 (installed)", "launches": 1, "not_checked": 0}]
    assert main(["--no-cache", "--quiet", str(script)]) == 0
    assert capsys.readouterr().out == ""  # findings only
    # a launch that is not checked (a recipe whose source is not beside this verl) is not said to be
    recipe = tmp_path / "recipe.sh"
    recipe.write_text("#!/usr/bin/env bash\npython3 -m recipe.fully_async_policy.fully_async_main trainer.x=1\n")
    main(["--no-cache", str(recipe)])
    out = capsys.readouterr().out.splitlines()
    assert "validate-scripts: note: not checked against verl 0.9.1 (installed) (1 launch: their notes say why)" in out
    assert any(
        "names recipe.fully_async_policy.fully_async_main at line 2 but its launch there is not checked" in x
        for x in out
    )


# ---- settings found from the scripts (issue 44) ----------------------------------------------


def test_settings_are_found_from_the_scripts_not_the_working_directory(tmp_path, capsys, monkeypatch):
    """The same script gives the same report from any folder: its repository's
    [tool.validate-scripts] (the nearest pyproject.toml with the table, above one without it)."""
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.validate-scripts]\nseverity = { override-missing-key = "warning" }\n')
    (root / "sub" / "pyproject.toml").write_text('[project]\nname = "sub"\n')  # no table: the search goes on
    script = _script(root, f"{LAUNCH} trainer.total_epoch=2\n", "sub/run.sh")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text('[tool.validate-scripts]\nseverity = { override-missing-key = "off" }\n')
    for cwd in (root / "sub", elsewhere, tmp_path):
        monkeypatch.chdir(cwd)
        code, doc = _report(capsys, script)
        assert (code, _rules(doc)) == (0, [(2, "override-missing-key", "warning")]), cwd


# ---- one finding per mistake (issue 44) -------------------------------------------------------


def test_keys_of_a_root_config_the_launch_does_not_name_are_one_finding(tmp_path, capsys):
    """RL-Factory's pattern: its root configs sit in verl's config folder; a launch that forgets
    --config-name=its_own gets one error naming it (the other keys as related lines), not one a key;
    of two roots that have the keys, the one that has the launch's other keys too is named."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "setup.py").write_text("")
    package = _verl_package(root, drop="no such line")
    extra = "env:\n  name: base\n  max_turns: 1\nreward_rollout:\n  enable: false\n"
    config = package / "trainer" / "config"
    (config / "tool_trainer.yaml").write_text("defaults:\n  - ppo_trainer\n  - _self_\n" + extra)
    (config / "megatron_tool_trainer.yaml").write_text("defaults:\n  - ppo_megatron_trainer\n  - _self_\n" + extra)
    keys = (
        "env.name=search env.max_turns=4 reward_rollout.enable=true "
        "actor_rollout_ref.actor.fsdp_config.param_offload=true"
    )
    script = _script(root, f"{LAUNCH} \\\n    {keys}\n")
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [(3, "override-missing-key", "error")]
    (finding,) = doc["findings"]
    assert "and 2 more keys" in finding["message"] and finding["message"].endswith("pass --config-name=tool_trainer")
    named = LAUNCH.replace("main_ppo ", "main_ppo --config-name=tool_trainer ")
    assert _report(capsys, _script(root, f"{named} {keys}\n"))[0] == 0


def test_no_root_config_is_advised_where_naming_it_would_make_other_keys_fail(tmp_path, capsys):
    """A Megatron launch (--config-name=ppo_megatron_trainer) that sets two keys only ppo_trainer has:
    ppo_trainer lacks its Megatron keys, so it is no cause; each key is its own finding."""
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/usr/bin/env bash\n"
        f"{LAUNCH.replace('main_ppo ', 'main_ppo --config-name=ppo_megatron_trainer ')} \\\n"
        "    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n"
        "    actor_rollout_ref.actor.fsdp_config.param_offload=true actor_rollout_ref.ref.fsdp_config.param_offload=true\n"
    )
    code, doc = _report(capsys, script)
    assert code == 1 and [r for _, r, _ in _rules(doc)] == ["override-missing-key", "override-missing-key"]
    assert not any("--config-name" in f["message"] for f in doc["findings"])


def test_a_projects_hydra_app_runs_verls_start_checks_where_it_calls_them(tmp_path, capsys):
    """verl's start-up checks (validate_config) are judged for a project's own entry only where its
    module calls them: a launch that sets no rollout micro batch fails there, and passes where the
    module never validates."""
    calls = ENTRY.replace("    run(config)\n", "    validate_config(config)\n    run(config)\n")
    lacking = "python3 -m myproj.main algorithm.adv_estimator=grpo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1\n"
    root = _project(tmp_path / "a", entry=calls)
    assert "verl-check" in {r for _, r, _ in _rules(_report(capsys, _script(root, lacking))[1])}
    root = _project(tmp_path / "b")
    assert "verl-check" not in {r for _, r, _ in _rules(_report(capsys, _script(root, lacking))[1])}


def test_a_root_config_whose_files_name_no_part_of_a_key_is_not_composed_to_explain_it(tmp_path, capsys, monkeypatch):
    """Which other root config has the missing keys is first asked of the config files each one's
    defaults reach: a root none of whose files names `env` (verl's evaluation, sft_trainer_engine,
    ppo_trainer itself, one that only quiets Hydra's logging) is never composed for it. The finding
    is the one composing them gives."""
    from verl_preflight.hydra_stage import tree

    root = tmp_path / "proj"
    root.mkdir()
    (root / "setup.py").write_text("")
    config = _verl_package(root, drop="no such line") / "trainer" / "config"
    extra = "env:\n  name: base\n  max_turns: 1\n"
    (config / "tool_trainer.yaml").write_text("defaults:\n  - ppo_trainer\n  - _self_\n" + extra)
    quiet = "defaults:\n  - ppo_trainer\n  - override hydra/job_logging: disabled\n  - _self_\n"
    (config / "quiet_trainer.yaml").write_text(quiet)  # (Hydra's own configs: no key of the launch)
    composed = []
    real = tree.compose_raw
    monkeypatch.setattr(tree, "compose_raw", lambda t, name, lines: composed.append(name) or real(t, name, lines))
    script = _script(root, f"{LAUNCH} \\\n    env.name=search env.max_turns=4\n")
    code, doc = _report(capsys, script)
    assert code == 1 and _rules(doc) == [(3, "override-missing-key", "error")]
    assert doc["findings"][0]["message"].endswith("pass --config-name=tool_trainer")
    assert set(composed) == {"ppo_trainer", "tool_trainer"}, composed
