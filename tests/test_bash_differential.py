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

from verl_preflight.launches import find_entry
from verl_preflight.shell import profiles as prof
from verl_preflight.shell.evaluate import evaluate
from verl_preflight.shell.parse import parse_script

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
            fh.write("\\0".join(args[i + 1:]) + "\\x1e")
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
    full_env.update({k: v for k, v in env.items() if v is not None})
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
        script, env, prof.unset_inputs(info), find_entry, ambient=ambient, script_name=os.path.basename(path)
    )
    candidates = [(o.status, [la.argv[la.entry :] for la in o.launches]) for o in outcomes]
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
