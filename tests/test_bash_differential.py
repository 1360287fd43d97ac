"""Differential test: the evaluator's launches equal what real bash passes to python3.

For every script under examples/ and tests/fixtures/ and every profile the
validator enumerates, the script runs under real bash with a stub `python3`
first on PATH. The stub records the argv of each `-m verl...` call; `-c`
probes exit 1. The evaluator, given the same environment, must produce the
same launches (module and every argument, in order) and agree on rejection.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import FIXTURES, ROOT

from verl_preflight.pipeline.launches import collapse_key, launch_of
from verl_preflight.shell import profiles as prof
from verl_preflight.core.values import Unknown
from verl_preflight.shell.directory import resolved
from verl_preflight.shell.evaluate import evaluate
from verl_preflight.shell.parse import parse_script
from verl_preflight.shell.words import Field

HOME = "/home/tester"
RECORD_SEP = "\x1e"

STUB = textwrap.dedent(
    """\
    #!{python}
    import os, sys
    args = sys.argv[1:]
    if "-c" in args and "-m" not in args:
        sys.exit(1)
    if "-m" in args:
        i = args.index("-m")
        with open(os.environ["STUB_RECORD"], "a", encoding="utf-8") as fh:
            fh.write("\\0".join([os.getcwd(), *args[i + 1:]]) + "\\x1e")
    sys.exit(0)
    """
)


# Rule fixtures that real bash cannot run to the end, by design.
NOT_RUNNABLE = {
    os.path.join("rules", "bash-syntax", "bad.sh"): "bash refuses to parse it",
    os.path.join("rules", "budget", "bad.sh"): "an endless loop",
}


def _scripts():
    out = []
    for top in (os.path.join(ROOT, "examples"), FIXTURES):
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                if (
                    name.endswith(".sh")
                    and not name.startswith("lib_")
                    and not name.startswith("install_")  # installers run pip and git: never run by a test
                    and os.path.relpath(path, FIXTURES) not in NOT_RUNNABLE
                ):
                    out.append(path)
    return sorted(out)


def declared_profiles(path) -> list[dict]:
    """`# profiles: A=x,y B=z` in a fixture's header: the environments its author meant."""
    with open(path, encoding="utf-8") as fh:
        head = fh.read(2000)
    m = re.search(r"^# profiles: (.*)$", head, re.MULTILINE)
    if not m or m.group(1).strip().startswith("none"):
        return []
    dims = []
    for item in m.group(1).split("(")[0].split():
        name, _, values = item.partition("=")
        if name and values:
            dims.append([(name, v) for v in values.split(",")])
    return [dict(combo) for combo in itertools.product(*dims)] if dims else []


def _cases():
    cases = []
    for path in _scripts():
        with open(path, "rb") as fh:
            script = parse_script(path, fh.read())
        info = prof.scan(script)
        envs, _ = prof.enumerate_profiles(prof.dimensions(info), 64)
        for env in declared_profiles(path):
            if env not in envs:
                envs.append(env)
        for env in envs:
            label = ",".join(f"{k}={v}" for k, v in env.items()) or "default"
            cases.append(pytest.param(path, env, id=f"{os.path.relpath(path, ROOT)}[{label}]"))
    return cases


# Commands that wait or act outside the test, stubbed: `sleep` returns at once and
# `ray` exits 1 as when no Ray cluster answers (a missing `ray` fails the same way).
QUICK_STUBS = {"sleep": 0, "ray": 1}


@pytest.fixture(scope="module")
def stub_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("stub")
    for name in ("python3", "python"):
        p = d / name
        p.write_text(STUB.replace("{python}", sys.executable))
        p.chmod(0o755)
    for name, status in QUICK_STUBS.items():
        p = d / name
        p.write_text(f"#!/bin/sh\nexit {status}\n")
        p.chmod(0o755)
    return d


def run_bash(path, env, stub_dir, tmp_path):
    record = tmp_path / "record"
    record.write_text("")
    base_path = f"{stub_dir}:/usr/bin:/bin"
    full_env = {"PATH": base_path, "HOME": HOME, "STUB_RECORD": str(record)}
    # a switch set to none of its literals (OTHER): bash gets a value the script never compares with
    full_env.update({k: (v if isinstance(v, str) else "another-value") for k, v in env.items() if v is not None})
    proc = subprocess.run(
        ["bash", os.path.basename(path)],
        cwd=os.path.dirname(path),
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    launches = [r.split("\0") for r in record.read_text().split(RECORD_SEP) if r]
    return proc.returncode, launches, base_path


def with_directory(launch, start: str) -> list:
    """A launch's words as the stub records them: the working directory bash ran it in (the
    evaluator's PWD at the launch, from the folder bash started in), then module and arguments."""
    where = resolved(launch.env.get("PWD"), start)
    return [Field.of(where) if where is not None else Field((Unknown("?", "not known"),)), *launch.argv[launch.entry :]]


def field_matches(field, text: str) -> bool:
    """Known text must be equal; an unknown piece (a probe's output) matches anything."""
    pattern = "".join(re.escape(p) if isinstance(p, str) else ".*" for p in field.pieces)
    return re.fullmatch(pattern, text, re.DOTALL) is not None


def same_launches(evaluated, recorded) -> bool:
    if len(evaluated) != len(recorded):
        return False
    for argv, real in zip(evaluated, recorded, strict=False):
        if len(argv) != len(real) or not all(field_matches(f, t) for f, t in zip(argv, real, strict=False)):
            return False
    return True


@pytest.mark.parametrize("path,env", _cases())
def test_evaluator_matches_bash(path, env, stub_dir, tmp_path):
    code, bash_launches, base_path = run_bash(path, env, stub_dir, tmp_path)
    with open(path, "rb") as fh:
        script = parse_script(path, fh.read())
    info = prof.scan(script)
    ambient = {"PATH": base_path, "HOME": HOME, "STUB_RECORD": str(tmp_path / "record")}
    outcomes = evaluate(
        script, env, prof.unset_inputs(info), launch_of, ambient=ambient, script_name=os.path.basename(path)
    )
    start = os.path.realpath(os.path.dirname(path))
    candidates = [(o.status, [with_directory(la, start) for la in o.launches]) for o in outcomes]
    matching = [status for status, launches in candidates if same_launches(launches, bash_launches)]
    assert matching, (
        f"bash passed {bash_launches!r}\nthe evaluator gives "
        f"{[[[f.display for f in la] for la in c[1]] for c in candidates]!r}"
    )
    if code != 0 and not bash_launches:
        assert "rejected" in matching
    if bash_launches:
        assert {"launches", "incomplete"} & set(matching)


def test_corpus_is_not_empty():
    assert len(_scripts()) >= 20
    assert len(_cases()) >= 40


def test_escaped_blank_at_line_end_is_reported_where_it_is():
    path = os.path.join(FIXTURES, "bash", "22_escaped_blank_at_line_end.sh")
    with open(path, "rb") as fh:
        script = parse_script(path, fh.read())
    (outcome,) = evaluate(script, {}, prof.unset_inputs(prof.scan(script)), launch_of)
    assert [la.argv[-1].value for la in outcome.launches] == [" ", " "]
    assert [(n.loc.line, n.loc.col) for n in outcome.notes if "backslash" in n.message] == [(7, 31), (11, 79)]


def test_no_bash_syntax_finding_where_bash_parses():
    from verl_preflight.shell.parse import syntax_notes

    wrong = []
    for path in _scripts():
        if subprocess.run(["bash", "-n", path], capture_output=True).returncode == 0:
            with open(path, "rb") as fh:
                wrong.extend(f"{path}:{n.loc.line}: {n.message}" for n in syntax_notes(parse_script(path, fh.read())))
    assert not wrong, "\n".join(wrong)


def test_a_script_started_as_a_program_reports_its_launch_at_both_places():
    path = os.path.join(FIXTURES, "bash", "26_wrapper_scripts.sh")
    with open(path, "rb") as fh:
        script = parse_script(path, fh.read())
    (outcome,) = evaluate(script, {}, prof.unset_inputs(prof.scan(script)), launch_of)
    first = outcome.launches[0]
    assert (os.path.basename(first.loc.path), first.loc.line) == ("lib_launch.sh", 9)
    passed = first.argv[-1]
    assert passed.value == "trainer.project_name=outer"
    assert (os.path.basename(passed.loc.path), passed.loc.line) == ("26_wrapper_scripts.sh", 10)
    assert len({la.loc.path for la in outcome.launches}) == 1


def test_profiles_that_launch_the_same_thing_are_one():
    from verl_preflight.pipeline.validate import Options, validate_script

    path = os.path.join(FIXTURES, "bash", "27_launcher_switch.sh")
    with open(path, "rb") as fh:
        dims = prof.dimensions(prof.scan(parse_script(path, fh.read())))
    assert len(prof.enumerate_profiles(dims, 64)[0]) == 4
    result = validate_script(path, None, Options())
    assert [dict(p.profile.env) for p in result.profiles] == [{"DEVICE": "gpu"}, {"DEVICE": "npu"}]


def test_a_loop_with_an_unknown_bound_does_not_hide_the_launch_after_it():
    path = os.path.join(FIXTURES, "bash", "28_loop_unknown_bound.sh")
    with open(path, "rb") as fh:
        script = parse_script(path, fh.read())
    outcomes = evaluate(script, {}, set(), launch_of)  # NNODES and NGPUS: unknown
    assert outcomes and all(o.status == "launches" for o in outcomes)
    nnodes = {o.launches[0].argv[-1].value for o in outcomes}
    assert nnodes == {"trainer.nnodes=1", "trainer.nnodes=2"}


def test_a_script_that_starts_itself_is_followed_once(tmp_path):
    path = tmp_path / "again.sh"
    path.write_text(
        f'for i in 1 2 3 4; do bash "$0" x; done\nbash {path} y\npython3 -m verl.trainer.main_ppo trainer.nnodes=1\n'
    )
    script = parse_script(str(path), path.read_bytes())
    (outcome,) = evaluate(script, {}, set(), launch_of)
    assert len(outcome.launches) == 1
    assert any("starts itself again" in n.message for n in outcome.notes)


def test_a_switch_set_to_other_is_unknown_text_that_is_none_of_the_literals(tmp_path):
    path = tmp_path / "other.sh"
    path.write_text(
        "engine=${ENGINE:-vllm}\n"
        'if [ "$engine" = vllm ]; then MODE=sync; else MODE=async; fi\n'
        'case "$engine" in vllm) N=1 ;; *) N=2 ;; esac\n'
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=$engine trainer.nnodes=$N +x.mode=$MODE\n"
    )
    script = parse_script(str(path), path.read_bytes())
    info = prof.scan(script)
    envs, _ = prof.enumerate_profiles(prof.dimensions(info), 64)
    assert envs == [{"ENGINE": "vllm"}, {"ENGINE": prof.OTHER}]
    (outcome,) = evaluate(script, envs[1], prof.unset_inputs(info), launch_of)
    argv = outcome.launches[0].argv
    assert [f.display for f in argv[3:]] == [
        "actor_rollout_ref.rollout.name=${ENGINE}",
        "trainer.nnodes=2",
        "+x.mode=async",
    ]


def test_forks_that_end_alike_are_one_profile(tmp_path):
    from verl_preflight.pipeline.validate import Options, validate_script

    path = tmp_path / "forks.sh"
    path.write_text(
        'if [ -n "$(hostname)" ]; then echo a; else echo b; fi\n'
        "if nvidia-smi; then N=1; else N=2; fi\n"
        "python3 -m verl.trainer.main_ppo trainer.nnodes=$N\n"
    )
    (outcomes,) = prof.collapse([evaluate(parse_script(str(path), path.read_bytes()), {}, set(), launch_of)], collapse_key)
    assert [[str(a) for a in o.assumptions] for o in outcomes] == [["`nvidia-smi` succeeds"], ["`nvidia-smi` fails"]]
    assert len(validate_script(str(path), None, Options()).profiles) == 2


def test_prefixes_reach_a_script_started_through_command_or_exec_and_no_later_one(tmp_path):
    inner = tmp_path / "inner.sh"
    inner.write_text("python3 -m verl.trainer.main_ppo trainer.project_name=${STAGE:-none}\n")
    path = tmp_path / "outer.sh"
    # the first prefix is for a script that cannot be followed: it reaches no later script
    path.write_text(
        f"STAGE=lost bash {path}\nSTAGE=one command bash {inner}\nbash {inner}\nSTAGE=two exec bash {inner}\n"
    )
    script = parse_script(str(path), path.read_bytes())
    (outcome,) = evaluate(script, {}, {"STAGE"}, launch_of)
    assert [la.argv[-1].value for la in outcome.launches] == [
        "trainer.project_name=one",
        "trainer.project_name=none",
        "trainer.project_name=two",
    ]
