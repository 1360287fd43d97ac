"""The house rules of the code base: one registry of rules, one typed unknown, -j-independent output.

- every id the code can emit is a registered rule class (shell notes, Hydra problems, policy rules);
- no internal placeholder ever reaches a message, an env, the JSON or render, on any fixture,
  example or corpus script in any profile;
- the output does not depend on -j (info notes included).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import FIXTURES, ROOT, SHARED

from verl_preflight.rules import Rule, all_rules, registry
from verl_preflight.shell.notes import NoteKind

SRC = os.path.join(ROOT, "src", "verl_preflight")
# Strings that only an implementation could invent: they must never be shown as the script's.
PLACEHOLDERS = ("<other>", "<unset>", "unknown0", "__current__")


def test_every_stage_kind_is_owned_by_one_rule_of_its_stage():
    """The shell and the Hydra stage hand down typed notes and problems; each kind is reported by
    exactly one rule, of that stage, which names it (`note = NoteKind.X`, `problem = HydraKind.X`)."""
    from verl_preflight.hydra_stage.problems import HydraKind
    from verl_preflight.rules import for_note, for_problem

    for kinds, owner, stage, attr in ((NoteKind, for_note, "bash", "note"), (HydraKind, for_problem, "hydra", "problem")):
        for kind in kinds:
            rule = owner(kind)
            assert rule.stage == stage, kind
            assert [r for r in all_rules() if getattr(r, attr, None) is kind] == [rule], kind


def test_no_rule_id_is_written_outside_its_rule():
    """Rule ids are the registry's names: no module but the rule's own spells one as a string."""
    # words that are also rule ids, used here for what they are: bash's builtin, a profile's JSON status
    elsewhere = {"readonly": ("launches.py", "builtins.py", "state.py"), "incomplete": ("validate.py", "evaluate.py")}
    ids = set(registry())
    offenders = []
    for dirpath, _, files in os.walk(SRC):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            own = {r.id for r in all_rules() if r.__module__.replace(".", os.sep) in path}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and node.value in ids and node.value not in own:
                    if name in elsewhere.get(node.value, ()):
                        continue
                    offenders.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: {node.value!r}")
    assert not offenders, offenders


def test_no_finding_is_built_outside_a_rule():
    """Findings are made by rule classes (Rule.emit / Rule.finding), never by hand with an id."""
    offenders = []
    for dirpath, _, files in os.walk(SRC):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for m in re.finditer(r"Finding(?:\.at)?\(\s*[^)]*?\"([a-z]+(?:-[a-z]+)+)\"", text):
                offenders.append((os.path.relpath(path, SRC), m.group(1)))
    assert offenders == []


def test_rule_classes_are_complete_and_unique():
    ids = [r.id for r in all_rules()]
    assert len(ids) == len(set(ids))
    for r in all_rules():
        assert issubclass(r, Rule)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.id), r.id
        assert r.severity in ("error", "warning", "info") and r.stage in ("bash", "hydra", "policy", "tool")
        assert r.summary and r.why and r.bad.strip() and r.good.strip(), r.id
        module = r.__module__.rsplit(".", 1)[-1]
        assert module == r.id.replace("-", "_"), f"{r.id} lives in {r.__module__}"
        if r.stage == "policy":
            assert r.scope in ("launch", "script"), r.id
        if r.severity == "error":  # an error says the launch fails: it names the code that decides it
            assert r.ground_truth, f"{r.id}: an error rule without its ground truth"


def _scripts():
    tops = [os.path.join(ROOT, "examples"), FIXTURES]
    corpus = os.path.join(SHARED, "corpus")
    if os.path.isdir(corpus):
        tops.append(corpus)
    out = []
    for top in tops:
        for dirpath, _, files in os.walk(top):
            out += [os.path.join(dirpath, n) for n in sorted(files) if n.endswith(".sh")]
    return sorted(out)


def _cli(*args, cache: bool = False):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "validate_scripts.py"), *args, *([] if cache else ["--no-cache"])],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def _label(line: str, start: int) -> str:
    """The `(profiles: ...)` that opens at `start`, to its closing parenthesis."""
    depth = 0
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return line[start : i + 1]
    return line[start:]


@pytest.mark.slow
def test_no_placeholder_reaches_any_report():
    scripts = _scripts()
    assert len(scripts) > 40
    out = _cli("--format", "json", "-j", "2", *scripts, cache=True)  # the text run below reuses the results
    assert out.returncode in (0, 1), out.stderr
    assert "internal error" not in out.stderr  # every script of the corpora and fixtures checked to its end
    doc = json.loads(out.stdout)
    leaks = [p for p in PLACEHOLDERS if p in out.stdout]
    assert not leaks, [
        (f["path"], f["line"], f["message"]) for f in doc["findings"] if any(p in json.dumps(f) for p in leaks)
    ][:10]
    pinned = _cli("--profile", "DEVICE=gpu", *[s for s in scripts if s.startswith(FIXTURES)][:40])
    assert not [p for p in PLACEHOLDERS if p in pinned.stdout]
    # the text report, every script in its own profiles: no placeholder, and a finding that holds in
    # many profiles names the smallest description of the set, never a list of dozens
    text = _cli("-j", "2", *scripts, cache=True)
    assert not [p for p in PLACEHOLDERS if p in text.stdout]
    # (the path is the machine's: measured without it)
    from verl_preflight.report.text import MAX_PROFILE_TEXT

    labels = [_label(line, at.start()) for line in text.stdout.splitlines() for at in re.finditer(r"\(profiles: ", line)]
    assert labels and max(len(label) for label in labels) <= MAX_PROFILE_TEXT + len("(profiles: )"), max(labels, key=len)
    longest = max((line.split(": ", 1)[-1] for line in text.stdout.splitlines()), key=len)
    assert len(longest) <= 400, longest


def test_render_shows_only_what_the_script_wrote(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/usr/bin/env bash\nread -r LR\nTP=$(( N * 2 ))\n"
        'python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.optim.lr="$LR" '
        'actor_rollout_ref.actor.megatron.tensor_model_parallel_size=$TP hydra.job.chdir=$CHDIR "$@"\n'
    )
    out = _cli("render", str(script), cache=True)
    assert out.returncode == 0, out.stderr
    assert "'<input read at run time>'" in out.stdout
    assert '"$(( N * 2 ))"' in out.stdout and '"${CHDIR}"' in out.stdout
    checked = _cli("--format", "json", str(script), cache=True)
    doc = json.loads(checked.stdout)
    # an unknown value is never type-checked by Hydra as if a stand-in were real
    assert [f for f in doc["findings"] if f["rule"] == "override-error"] == []


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_output_does_not_depend_on_jobs(jobs, tmp_path):
    scripts = _scripts()[:24]
    reference = _cli("--format", "json", "-j", "1", *scripts).stdout
    assert json.loads(reference)["scripts"]
    assert _cli("--format", "json", "-j", jobs, *scripts).stdout == reference


def test_add_rule_scaffolds_one_module_and_two_fixtures(tmp_path):
    """tools/add_rule.py writes a module the registry finds and two fixtures; nothing else."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info"))
    before = {str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file()}
    run = subprocess.run(
        [sys.executable, str(copy / "tools" / "add_rule.py"), "policy", "demo-rule", "--severity", "warning"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    after = {str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file()}
    assert after - before == {
        "src/verl_preflight/rules/policy/demo_rule.py",
        "tests/fixtures/rules/demo-rule/bad.sh",
        "tests/fixtures/rules/demo-rule/good.sh",
    }
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "from verl_preflight.rules import get; r = get('demo-rule'); print(r.severity, r.scope)",
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(copy / "src")),
    )
    assert probe.stdout.split() == ["warning", "launch"], probe.stderr
