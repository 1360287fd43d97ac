"""`--fix` and `--diff` (fix.py): the word that wrote a mechanical mistake is rewritten in place.

Fixtures: tests/fixtures/fix/<name>.sh as written, tests/fixtures/fix/fixed/<name>.sh as `--fix`
must leave it (see the README there). Each test copies the fixtures to a temporary folder first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import FIXTURES
from conftest import run_cli as run

from verl_preflight.app.cli import main
from verl_preflight.rules import all_rules

FIX = os.path.join(FIXTURES, "fix")
SCRIPTS = ["append_in_array.sh", "missing_key.sh", "use_mbridge.sh", "sourced.sh", "profiles_disagree.sh"]
HELPERS = ["lib_overrides.sh"]

# what real bash must pass verl after --fix: each override the fix changes, before -> after
CHANGED = {
    "append_in_array.sh": {
        "+actor_rollout_ref.actor.use_kl_loss=True": "actor_rollout_ref.actor.use_kl_loss=True",
        "+trainer.val_before_train=False": "trainer.val_before_train=False",
    },
    "missing_key.sh": {
        "actor_rollout_ref.actor.checkpoint.save_lora_only=False": (
            "+actor_rollout_ref.actor.checkpoint.save_lora_only=False"
        ),
        "actor_rollout_ref.rollout.engine_kwargs.vllm.swap_space=4": (
            "+actor_rollout_ref.rollout.engine_kwargs.vllm.swap_space=4"
        ),
        "trainer.total_epoch=10": "trainer.total_epochs=10",
    },
    "use_mbridge.sh": {
        "actor_rollout_ref.actor.megatron.use_mbridge=False": "actor_rollout_ref.actor.megatron.use_mbridge=True",
    },
    "sourced.sh": {
        "+actor_rollout_ref.actor.use_kl_loss=True": "actor_rollout_ref.actor.use_kl_loss=True",
    },
    "profiles_disagree.sh": {},
}


@pytest.fixture
def work(tmp_path):
    """The fixtures, copied: (folder, {name: path})."""
    for name in SCRIPTS + HELPERS:
        shutil.copy(os.path.join(FIX, name), tmp_path / name)
    return tmp_path, {name: str(tmp_path / name) for name in SCRIPTS}


def read(path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def test_fix_rewrites_only_the_words_that_wrote_the_mistakes(work, capsys):
    folder, paths = work
    code, out, _ = run(capsys, "--fix", *paths.values())
    for name in SCRIPTS + HELPERS:
        assert read(folder / name) == read(os.path.join(FIX, "fixed", name)), name
    assert "fixed 7 findings in 4 files" in out
    # what is left: the refused fix, the value built from a variable, the key that is no typo
    assert "override-append-existing" in out and "use-mbridge" in out and "grad_offload" in out
    assert "use_kl_loss" not in out and "total_epoch'" not in out
    assert code == 1


def test_the_fixed_fixtures_are_the_fixtures_with_the_changes_only():
    """The expected files differ from the originals exactly in the characters CHANGED names."""
    for name in SCRIPTS:
        before = read(os.path.join(FIX, name)).decode()
        after = read(os.path.join(FIX, "fixed", name)).decode()
        if name == "sourced.sh":
            before = read(os.path.join(FIX, "lib_overrides.sh")).decode()
            after = read(os.path.join(FIX, "fixed", "lib_overrides.sh")).decode()
            assert read(os.path.join(FIX, name)) == read(os.path.join(FIX, "fixed", name))
        for old, new in CHANGED[name].items():
            assert before.count(old) == 1, (name, old)
            before = before.replace(old, new)
        assert before == after, name


def test_a_second_fix_changes_nothing(work, capsys):
    folder, paths = work
    run(capsys, "--fix", *paths.values())
    fixed_once = {name: read(folder / name) for name in SCRIPTS + HELPERS}
    code, out, _ = run(capsys, "--fix", *paths.values())
    assert {name: read(folder / name) for name in SCRIPTS + HELPERS} == fixed_once
    assert "fixed 0 findings in 0 files" in out
    code, out, err = run(capsys, "--diff", *paths.values())
    assert (code, out) == (0, "")
    assert "would fix 0 findings in 0 files" in err


def test_diff_prints_a_unified_diff_and_writes_nothing(work, capsys):
    folder, paths = work
    before = {name: read(folder / name) for name in SCRIPTS + HELPERS}
    code, out, err = run(capsys, "--diff", paths["append_in_array.sh"])
    assert {name: read(folder / name) for name in SCRIPTS + HELPERS} == before
    assert code == 1
    path = paths["append_in_array.sh"]
    assert out.startswith(f"--- {path}\n+++ {path}\n@@ -9,7 +9,7 @@\n")
    changed = [line for line in out.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == [
        "-    +actor_rollout_ref.actor.use_kl_loss=True   # the key is in verl's YAML already",
        "+    actor_rollout_ref.actor.use_kl_loss=True   # the key is in verl's YAML already",
        '-    "+trainer.val_before_train=False" \\',
        '+    "trainer.val_before_train=False" \\',
    ]
    assert "would fix 2 findings in 1 file" in err
    # the diff is what --fix then writes: patch(1) applies it to the original
    if shutil.which("patch"):
        copy = folder / "patched.sh"
        shutil.copy(path, copy)
        subprocess.run(["patch", "-s", str(copy)], input=out, text=True, check=True)
        assert read(copy) == read(os.path.join(FIX, "fixed", "append_in_array.sh"))


def test_diff_of_a_sourced_file_names_that_file(work, capsys):
    folder, paths = work
    code, out, _ = run(capsys, "--diff", paths["sourced.sh"])
    assert code == 1
    lib = str(folder / "lib_overrides.sh")
    assert out.startswith(f"--- {lib}\n+++ {lib}\n")
    assert '-    "+actor_rollout_ref.actor.use_kl_loss=True"\n+    "actor_rollout_ref.actor.use_kl_loss=True"\n' in out


def test_a_fix_another_profile_disagrees_with_is_refused(work, capsys):
    folder, paths = work
    path = paths["profiles_disagree.sh"]
    before = read(path)
    code, out, _ = run(capsys, "--fix", path)
    assert read(path) == before
    assert (
        f"{path}:24:5: note: not fixed [override-append-existing]: the word also reaches a launch where this fix "
        "does not hold (profile DEVICE=gpu)"
    ) in out
    assert "fixed 0 findings in 0 files" in out
    # with the profiles pinned, the others are not known: nothing is fixed either
    code, out, err = run(capsys, "--diff", "--profile", "DEVICE=npu", path)
    assert (code, out) == (0, "")
    assert "profiles are pinned" in err


def test_a_word_shared_by_two_scripts_is_fixed_only_when_both_agree(tmp_path, capsys):
    lib = tmp_path / "lib_common.sh"
    lib.write_text("COMMON=( +actor_rollout_ref.actor.megatron.use_mbridge=True )\n")
    for name, engine in (("a.sh", "megatron"), ("b.sh", "dp")):
        (tmp_path / name).write_text(
            f'source ./lib_common.sh\npython3 -m verl.trainer.main_ppo model_engine={engine} "${{COMMON[@]}}" "$@"\n'
        )
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, out, err = run(capsys, "--diff", "a.sh")
        assert code == 1 and "-COMMON=( +actor_rollout_ref" in out
        code, out, err = run(capsys, "--diff", "a.sh", "b.sh")
        assert (code, out) == (0, "")
        assert "b.sh also passes this word to verl, and there this fix does not hold" in err
    finally:
        os.chdir(cwd)


def test_one_file_reached_by_two_names_is_rewritten_once_with_every_edit(tmp_path, capsys):
    """a.sh sources lib.sh, b.sh sources lib2.sh, a symlink to it: one file, one diff, both
    edits in one write (each name's edits written over the other's lost one of them)."""
    (tmp_path / "lib.sh").write_text("A=( +trainer.val_before_train=False )\nB=( +trainer.total_epochs=3 )\n")
    os.symlink("lib.sh", tmp_path / "lib2.sh")
    for name, lib, arr in (("a.sh", "lib.sh", "A"), ("b.sh", "lib2.sh", "B")):
        (tmp_path / name).write_text(f'source ./{lib}\npython3 -m verl.trainer.main_ppo "${{{arr}[@]}}" "$@"\n')
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, out, err = run(capsys, "--diff", "a.sh", "b.sh")
        assert out.count("+++ ") == 1 and "would fix 2 findings in 1 file" in err, (out, err)
        code, out, _ = run(capsys, "--fix", "a.sh", "b.sh")
        assert "fixed 2 findings in 1 file" in out, out
        assert read(tmp_path / "lib.sh") == b"A=( trainer.val_before_train=False )\nB=( trainer.total_epochs=3 )\n"
        assert os.path.islink(tmp_path / "lib2.sh")
    finally:
        os.chdir(cwd)


def test_a_word_also_passed_to_a_python_program_that_is_not_verl_is_not_rewritten(tmp_path, capsys):
    """`python3 my_hydra_app.py "${A[@]}"` gets the word too, and its config is not verl's:
    what `+` means there is not known, so the word is left as it is."""
    path = tmp_path / "other_program.sh"
    path.write_text(
        "A=(+trainer.val_before_train=False)\n"
        'python3 -m verl.trainer.main_ppo "${A[@]}" "$@"\n'
        'nohup python3 my_hydra_app.py "${A[@]}"\n'
    )
    before = read(path)
    code, out, _ = run(capsys, "--fix", str(path))
    assert read(path) == before
    assert "not fixed [override-append-existing]: the word also reaches python3 my_hydra_app.py" in out, out


def test_a_key_built_from_variables_or_by_eval_is_not_rewritten(tmp_path, capsys):
    path = tmp_path / "built.sh"
    path.write_text(
        "K=trainer\n"
        'eval "E=trainer.total_epoch=3"\n'
        'python3 -m verl.trainer.main_ppo ${K}.total_epoch=2 "$E" tr\\ainer.total_epoch=4 "$@"\n'
    )
    before = read(path)
    code, out, _ = run(capsys, "--fix", str(path))
    assert read(path) == before
    notes = [line for line in out.splitlines() if "not fixed" in line]
    assert len(notes) == 3, out
    assert "built from variables" in notes[0] and "escapes" in notes[2]


def test_a_fix_the_options_of_an_open_group_disagree_on_is_not_made(tmp_path, capsys):
    """`model_engine=${A}e${B}` (known only at run time) is megatron or veomni: both lack
    actor.profile, but only McoreActorConfig has such a field. `+` is right for megatron and
    breaks veomni (config-field: VeOmniActorConfig has no field 'profile'): no fix."""
    path = tmp_path / "open_group.sh"
    path.write_text(
        "A=$(cat /etc/engine_a)\nB=$(cat /etc/engine_b)\n"
        'python3 -m verl.trainer.main_ppo model_engine=${A}e${B} actor_rollout_ref.actor.profile=1 "$@"\n'
    )
    before = read(path)
    code, out, _ = run(capsys, "--fix", str(path))
    assert read(path) == before
    assert "override-missing-key" in out and "fixed 0 findings in 0 files" in out


def test_the_cache_never_returns_the_result_of_the_file_before_it_was_fixed(work, capsys):
    folder, paths = work
    path = paths["append_in_array.sh"]
    code, out, _ = run(capsys, path)  # fills the result cache
    assert code == 1 and "override-append-existing" in out
    run(capsys, "--fix", path)
    code, out, _ = run(capsys, path)
    assert code == 0 and "override-append-existing" not in out, out


GDN_TWICE = """\
#!/usr/bin/env bash
DEVICE=${DEVICE:-gpu}
ARGS=(
  algorithm.adv_estimator=grpo model_engine=megatron actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
  +actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True
)
if [ "$DEVICE" = npu ] && [ "${USE_MINDSPEED_BRIDGE:-False}" = True ]; then
  ARGS+=(+actor_rollout_ref.actor.megatron.override_transformer_config.use_triton_gdn=False)
  ARGS+=(+actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True)
fi
python3 -m verl.trainer.main_ppo "${ARGS[@]}"
"""


def test_a_fix_whose_word_depends_on_another_findings_word_is_unsafe(tmp_path, capsys):
    """Issue 44, item 5: an ungated `+...use_ascend_gdn=True` (line 6, its own gdn-flag-gate
    finding) and the gated one (line 10) that collides with it. Dropping line 11's `+` is what
    Hydra's message says, but line 6 is the mistake: once it goes, line 10 needs its `+` again.
    The fix is unsafe: --fix and --diff leave it and say why; --unsafe-fixes applies it."""
    script = tmp_path / "run.sh"
    script.write_text(GDN_TWICE)
    code, out, err = run(capsys, "--no-cache", script.as_posix())
    assert "run.sh:10:10: error: Could not append to config" in out and "(see also line 6)" in out, out
    assert "run.sh:6:3: warning:" in out and "[gdn-flag-gate]" in out
    code, out, err = run(capsys, "--no-cache", "--diff", script.as_posix())
    assert (code, out) == (0, ""), out
    assert (
        f"{script}:10:10: note: not fixed [override-append-existing]: unsafe: line 6, which this finding involves, "
        "has another finding [gdn-flag-gate] (--unsafe-fixes applies it)"
    ) in err
    code, out, err = run(capsys, "--no-cache", "--fix", script.as_posix())
    assert script.read_text() == GDN_TWICE and "fixed 0 findings in 0 files" in out
    code, out, err = run(capsys, "--no-cache", "--diff", "--unsafe-fixes", script.as_posix())
    assert code == 1 and "+  ARGS+=(actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True)" in out
    # with no ungated line, the same `+` on an item verl's config has is a safe fix, applied
    script.write_text(GDN_TWICE.replace("  +actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True\n)", "  +trainer.total_epochs=2\n)"))
    code, out, err = run(capsys, "--no-cache", "--fix", script.as_posix())
    assert "fixed 1 finding in 1 file" in out and "  trainer.total_epochs=2\n" in script.read_text(), out


def test_unsafe_fixes_goes_with_fix_or_diff(capsys):
    code, out, err = run(capsys, "--unsafe-fixes", os.path.join(FIX, SCRIPTS[0]))
    assert code == 2 and "--unsafe-fixes goes with --fix or --diff" in err


def test_fix_refuses_standard_input(capsys):
    code, out, err = run(capsys, "--fix", "-")
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "--fix cannot rewrite standard input" in err


def test_fix_and_diff_are_one_or_the_other(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--fix", "--diff", os.path.join(FIX, SCRIPTS[0])])
    assert exit_.value.code == 2


STUB = textwrap.dedent(
    """\
    #!{python}
    import os, sys
    args = sys.argv[1:]
    if "-m" in args:
        with open(os.environ["STUB_RECORD"], "a", encoding="utf-8") as fh:
            fh.write("\\0".join(args[args.index("-m") + 1 :]) + "\\x1e")
    sys.exit(0 if "-m" in args else 1)
    """
)


def bash_argv(path, env, stub, record) -> list[list[str]]:
    """What real bash passes python3 -m ... (the stub records it), one list per launch."""
    record.write_text("")
    full_env = {"PATH": f"{stub}:/usr/bin:/bin", "HOME": "/home/tester", "STUB_RECORD": str(record), **env}
    subprocess.run(["bash", os.path.basename(path)], cwd=os.path.dirname(path), env=full_env, check=True, timeout=60)
    return [r.split("\0") for r in record.read_text().split("\x1e") if r]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on PATH")
@pytest.mark.parametrize("name", SCRIPTS)
def test_real_bash_passes_the_fixed_overrides(name, work, capsys, tmp_path_factory):
    folder, paths = work
    stub = tmp_path_factory.mktemp("stub")
    (stub / "python3").write_text(STUB.replace("{python}", sys.executable))
    (stub / "python3").chmod(0o755)
    record = tmp_path_factory.mktemp("record") / "argv"
    envs = [{"DEVICE": "gpu"}, {"DEVICE": "npu"}] if name == "profiles_disagree.sh" else [{}]
    before = [bash_argv(paths[name], env, stub, record) for env in envs]
    run(capsys, "--fix", paths[name])
    after = [bash_argv(paths[name], env, stub, record) for env in envs]
    expected = [[[CHANGED[name].get(arg, arg) for arg in launch] for launch in runs] for runs in before]
    assert after == expected
    assert before != after or not CHANGED[name]


def test_fixable_rules_say_so_everywhere(capsys):
    fixable = {r.id for r in all_rules() if r.fixable}
    assert fixable == {"override-append-existing", "override-missing-key", "use-mbridge"}
    for r in all_rules():
        assert bool(r.fix_doc) == r.fixable, r.id
    code, out, _ = run(capsys, "--list-rules")
    marked = {line.split()[0] for line in out.splitlines() if line.split()[2:3] == ["fixable"]}
    assert code == 0 and marked == fixable
    code, out, _ = run(capsys, "--explain", "override-missing-key")
    assert "(error, hydra, fixable)" in out and "Fix: --fix adds the `+`" in out
    code, out, _ = run(capsys, "--explain", "override-syntax")
    assert "Fix: none" in out
    with open(os.path.join(os.path.dirname(FIXTURES), "..", "docs", "rules.md"), encoding="utf-8") as fh:
        doc = fh.read()
    for rid in fixable:
        assert f"### `{rid}` (error, fixable)" in doc


def test_a_read_only_script_is_not_rewritten(work, capsys):
    """`chmod a-w`: the rename would replace it (the folder is writable, and root may write
    anything); --fix says it cannot write it and leaves it as it is."""
    folder, paths = work
    target = paths["use_mbridge.sh"]
    os.chmod(target, 0o444)
    before = read(target)
    code, out, err = run(capsys, "--fix", target)
    assert read(target) == before
    assert "read-only" in out + err
    assert oct(os.stat(target).st_mode & 0o777) == "0o444"


def test_a_script_bash_cannot_parse_is_not_rewritten(tmp_path, capsys):
    """A bash-syntax error: bash runs nothing of it, and the tool's reading of it is not
    certain enough to rewrite a word (the typo is still reported)."""
    script = tmp_path / "broken.sh"
    script.write_text(
        "#!/usr/bin/env bash\n"
        'python3 -m verl.trainer.main_ppo trainer.total_epoch=3 "$@"\n'
        "if true; then\n"  # never closed
    )
    before = read(script)
    code, out, err = run(capsys, "--fix", str(script))
    assert read(script) == before
    assert "override-missing-key" in out and "bash-syntax" in out
    assert "not fixed [override-missing-key]: bash cannot parse this script" in out
