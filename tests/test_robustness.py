"""Hostile and broken input: nothing is ever executed, nothing crashes, everything is bounded."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap

import pytest
from conftest import FIXTURES, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verl_preflight.hydra_stage.tree import ConfigCaches
from verl_preflight.rules.schema import load_schema
from verl_preflight.shell.state import Budget
from verl_preflight.pipeline.validate import Options, validate_script

TOOL = os.path.join(ROOT, "tools", "validate_scripts.py")

# Runs the validator with every way of starting a process or opening a socket refused.
GUARDED = textwrap.dedent(
    """\
    import sys
    BLOCKED = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
               "socket.connect", "socket.bind", "pty.spawn")
    def audit(event, args):
        if event.startswith(BLOCKED):
            sys.stderr.write("BLOCKED " + event + "\\n")
            raise RuntimeError("blocked: " + event)
    sys.addaudithook(audit)
    sys.path.insert(0, SRC)
    from verl_preflight.app.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def run_guarded(tmp_path, *args, timeout=120):
    guard = tmp_path / "guarded.py"
    guard.write_text(f"SRC = {os.path.join(ROOT, 'src')!r}\n" + GUARDED)
    # -j 1: worker processes would be refused by the guard, and they are not what is tested here
    return subprocess.run(
        [sys.executable, str(guard), "-j", "1", *args], capture_output=True, text=True, timeout=timeout, cwd=tmp_path
    )


def test_hostile_scripts_are_never_executed(tmp_path):
    m = tmp_path / "markers"
    m.mkdir()
    (tmp_path / "lib.sh").write_text(f"touch {m}/sourced\nexport FROM_LIB=1\n")
    script = tmp_path / "hostile.sh"
    script.write_text(
        textwrap.dedent(f"""\
        #!/usr/bin/env bash
        A=$(touch {m}/cmdsub)
        B=`touch {m}/backtick`
        eval "touch {m}/eval"
        source <(touch {m}/procsub; echo X=1)
        cat <(touch {m}/procsub2)
        trap 'touch {m}/trap' EXIT
        f() {{ touch {m}/function; }}
        f
        . ./lib.sh
        C=$(curl -s http://127.0.0.1:9/payload.sh)
        python3 -c 'open("{m}/python", "w")'
        python3 -m verl.trainer.main_ppo data.train_files=$A actor_rollout_ref.model.path=$C "$@"
        """)
    )
    proc = run_guarded(tmp_path, "--no-cache", str(script))
    assert "BLOCKED" not in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    assert list(m.iterdir()) == []
    assert "source of a path that is not known statically" in proc.stdout  # <(...) is never run


@pytest.mark.parametrize(
    "name,data",
    [
        ("empty.sh", b""),
        ("random.sh", bytes(random.Random(1).randrange(256) for _ in range(20000))),
        ("latin1.sh", "X='caf\xe9'\npython3 -m verl.trainer.main_ppo trainer.project_name=$X\n".encode("latin-1")),
        ("nested_cmdsub.sh", b"X=" + b"$(" * 3000 + b"echo" + b")" * 3000 + b"\n"),
        ("nested_if.sh", b"if true; then\n" * 2000 + b":\n" + b"fi\n" * 2000),
        ("nested_group.sh", b"{ " * 2000 + b":" + b"; }" * 2000 + b"\n"),
        ("deep_arith.sh", b"X=$((" + b"(" * 2000 + b"1" + b")" * 2000 + b"))\n"),
        ("many_branches.sh", b"".join(b'if [ "$V%d" = x ]; then A+=(a); fi\n' % i for i in range(40))),
        ("endless.sh", b"while true; do X=$((X+1)); done\npython3 -m verl.trainer.main_ppo\n"),
        ("recursion.sh", b"f() { f; }\nf\n"),
        ("source_self.sh", b". ./source_self.sh\n"),
    ],
)
def test_bad_input_is_a_finding_not_a_crash(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    proc = run_guarded(tmp_path, "--no-cache", str(path), timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "internal-error" not in proc.stdout


def test_mutated_real_scripts(tmp_path):
    """Truncated and bit-flipped copies of the examples: findings, never a crash."""
    rng = random.Random(7)
    sources = [
        os.path.join(ROOT, "examples", "grpo_trainer", n)
        for n in sorted(os.listdir(os.path.join(ROOT, "examples", "grpo_trainer")))
    ]
    for i in range(12):
        data = bytearray(open(sources[i % len(sources)], "rb").read())
        if i % 2:
            data = data[: rng.randrange(len(data))]
        else:
            for _ in range(20):
                pos = rng.randrange(len(data))
                data[pos] ^= 1 << rng.randrange(8)
        (tmp_path / f"m{i}.sh").write_bytes(bytes(data))
    proc = run_guarded(tmp_path, "--no-cache", str(tmp_path), timeout=300)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode in (0, 1)
    assert "internal-error" not in proc.stdout


def test_size_cap(tmp_path):
    big = tmp_path / "big.sh"
    big.write_bytes(b"# filler\n" * (5 * 1024 * 1024 // 9 + 10))
    proc = run_guarded(tmp_path, "--no-cache", str(big))
    assert proc.returncode == 1 and "file-too-large" in proc.stdout


def test_paths_symlink_loops_and_odd_names(tmp_path):
    odd = tmp_path / "dir with spaces" / "répertoire"
    odd.mkdir(parents=True)
    (odd / "run qwen ü.sh").write_text("python3 -m verl.trainer.main_ppo trainer.total_epochs=1\n")
    os.symlink(tmp_path / "dir with spaces", odd / "loop")
    proc = run_guarded(tmp_path, "--no-cache", "--format", "json", str(tmp_path / "dir with spaces"))
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout.count("run qwen ü.sh") >= 1 and "Traceback" not in proc.stderr


def test_fuzzer_crashes_stay_fixed(tmp_path):
    """Inputs the atheris harness once crashed on (fuzz/fuzz_validate.py)."""
    crashes = os.path.join(FIXTURES, "crashes")
    for name in sorted(os.listdir(crashes)):
        target = tmp_path / (name + ".sh")
        target.write_bytes(open(os.path.join(crashes, name), "rb").read())
    proc = run_guarded(tmp_path, "--no-cache", str(tmp_path))
    assert proc.returncode in (0, 1) and "internal-error" not in proc.stdout, proc.stdout[-2000:]


WORDS = [
    "python3",
    "-m",
    "verl.trainer.main_ppo",
    "X=1",
    "$X",
    '"${A[@]}"',
    "A=(a b)",
    "case",
    "in",
    "esac",
    "if",
    "then",
    "fi",
    "[",
    "]",
    "[[",
    "]]",
    "$((1/0))",
    "${X:-d}",
    "${X//a/b}",
    "&&",
    "||",
    ";",
    "\n",
    "(",
    ")",
    "{",
    "}",
    "'",
    '"',
    "$(",
    "`",
    "for",
    "do",
    "done",
    "while",
    "function",
    "f()",
    "exit 1",
    "set -u",
    "source",
    "trainer.nnodes=2",
    "+a.b=1",
    "~c",
    "model_engine=megatron",
    "<<EOF",
    "EOF",
    "\\ #x",
    "\\",
    "$((A[1]+T[k]))",
    "read -ra A",
    "export X=1",
    "env -u X",
    "sudo -E",
    "CUDA_VISIBLE_DEVICES=0",
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS), max_size=40), st.integers(min_value=0, max_value=2**16))
def test_generated_bash_never_raises(config_cache, tmp_path_factory, words, seed):
    path = tmp_path_factory.mktemp("gen") / "g.sh"
    rng = random.Random(seed)
    path.write_text("".join(w + rng.choice([" ", " ", "\n"]) for w in words))
    opts = Options(max_profiles=4, budget=Budget(steps=5000, states=8, loop_iterations=50), schema=load_schema())
    validate_script(str(path), ConfigCaches(config_cache), opts)


def test_unreadable_inputs_exit_2_without_hanging(tmp_path):
    fifo = tmp_path / "pipe.sh"
    os.mkfifo(fifo)
    proc = run_guarded(tmp_path, "--no-cache", str(fifo), timeout=60)
    assert proc.returncode == 2 and "not a regular file" in proc.stderr
    (tmp_path / "scripts").mkdir()
    os.symlink(tmp_path / "missing.sh", tmp_path / "scripts" / "dangling.sh")
    proc = run_guarded(tmp_path, "--no-cache", str(tmp_path / "scripts" / "dangling.sh"))
    assert proc.returncode == 2 and "no such file" in proc.stderr and "Traceback" not in proc.stderr


# One budget per script, shared by its profiles (issue 14): eight profiles that each loop
# 400 times cost the script's steps once, not eight times.
EIGHT_PROFILES = textwrap.dedent(
    """\
    #!/usr/bin/env bash
    [ "$A" = 1 ] && echo a
    [ "$B" = 1 ] && echo b
    [ "$C" = 1 ] && echo c
    i=0
    while [ "$i" -lt 400 ]; do i=$((i + 1)); done
    python3 -m verl.trainer.main_ppo trainer.total_epochs=1
    """
)


def _budget_findings(tmp_path, budget):
    import verl_preflight.shell.evaluate as evaluate_module

    path = tmp_path / "eight.sh"
    path.write_text(EIGHT_PROFILES)
    allowances = []
    real = evaluate_module.evaluate

    def spy(*args, **kwargs):
        allowances.append(kwargs.get("allowance"))
        return real(*args, **kwargs)

    import verl_preflight.pipeline.validate as validate_module

    validate_module.evaluate, saved = spy, validate_module.evaluate
    try:
        result = validate_script(str(path), None, Options(budget=budget))
    finally:
        validate_module.evaluate = saved
    return result, allowances


def test_the_step_budget_is_shared_by_a_scripts_profiles(tmp_path):
    result, allowances = _budget_findings(tmp_path, Budget(steps=4000))
    assert len(allowances) == 8 and len({id(a) for a in allowances}) == 1  # one allowance for all eight
    assert allowances[0].steps <= 4000 + 8  # each profile still running stops at its next step
    budget = [f for f in result.findings if f.rule == "budget"]
    assert budget and all("this script's evaluation budget of 4000 steps" in f.message for f in budget)
    statuses = [p.status for p in result.profiles]
    assert "launches" in statuses and "incomplete" in statuses  # the first profiles ran out, the later stopped


def test_a_script_under_its_budget_runs_every_profile(tmp_path):
    result, allowances = _budget_findings(tmp_path, Budget())
    assert [f for f in result.findings if f.rule == "budget"] == []
    assert {p.status for p in result.profiles} == {"launches"}
    assert allowances[0].steps > 8 * 400  # every profile ran its loop, counted on the one allowance


def test_the_time_budget_ends_a_script_in_a_fixed_text(tmp_path):
    """The clock is a backstop: a script past it is reported as not checked, in a text that
    does not say where the evaluation was, and nothing else of it."""
    result, _ = _budget_findings(tmp_path, Budget(seconds=0.0))
    assert [(f.rule, f.line, f.column) for f in result.findings] == [("budget", 1, 1)]
    assert result.findings[0].message.startswith("not checked: this script's evaluation ran past 0 s")
    assert {p.status for p in result.profiles} == {"incomplete"}
    assert all(not p.launches for p in result.profiles)
