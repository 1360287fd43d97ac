"""Differential test on scripts nobody here wrote: what real bash passes vs the evaluator.

Every *.sh of ../shared/corpus runs under real bash, with stubs first on PATH
(`python3` records the argv of each `-m verl...` call; `date`, `nproc`,
`nvidia-smi`, `ray`, `git`, ... print run-specific text and do nothing), in
four profiles: the default one, DEVICE=gpu, DEVICE=npu and
DEVICE=npu,USE_MINDSPEED_BRIDGE=True. It runs twice, with stubs that print
different things, from a different working directory, HOME and path to the
corpus: only launches whose argv is the same both times ("static") count, and
each must be one the evaluator gives in the same profile. An environment
variable the profile leaves unset may stay symbolic (`${WORK_DIR}`) where bash
expanded it to nothing. As root, bash runs as `nobody` and without a network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest
from conftest import SHARED

from verl_preflight.pipeline.launches import launch_of
from verl_preflight.shell import profiles as prof
from verl_preflight.shell.evaluate import evaluate
from verl_preflight.shell.parse import parse_script, syntax_notes
from verl_preflight.shell.words import Unknown

CORPUS = os.path.join(SHARED, "corpus")
CORPORA = ("verl-v0.7.0", "logic-rl")
PROFILES = (
    {},
    {"DEVICE": "gpu"},
    {"DEVICE": "npu"},
    {"DEVICE": "npu", "USE_MINDSPEED_BRIDGE": "True"},
)
RECORD_SEP = "\x1e"
NOBODY = 65534

pytestmark = [
    pytest.mark.slow,  # the slow tier (make test-slow): real bash over the corpus
    pytest.mark.skipif(not os.path.isdir(CORPUS), reason="no ../shared/corpus (a fresh clone has none)"),
]

# One stub for every command name; it records verl launches wherever they are
# (python3 -m verl..., torchrun ... -m verl..., ray job submit -- python3 -m verl...).
STUB = r"""#!/bin/bash
args=("$@")
n=${#args[@]}
for ((i = 0; i < n; i++)); do
    a=${args[i]}
    if [[ $a == -m && $((i + 1)) -lt $n && ${args[i+1]} == verl.* ]]; then
        printf '%s\0' "${args[@]:i+1}" >>"$STUB_RECORD"; printf '\036' >>"$STUB_RECORD"; exit 0
    fi
    if [[ $a == -mverl.* ]]; then
        printf '%s\0' "${args[@]:i}" >>"$STUB_RECORD"; printf '\036' >>"$STUB_RECORD"; exit 0
    fi
done
case ${0##*/} in
    python|python3) for a in "$@"; do [[ $a == -c ]] && { echo "$STUB_TOKEN"; exit 1; }; done; exit 0 ;;
    tee) exec cat ;;
    mkdir|rm|cp|mv|ln|chmod|touch|sleep|wait|kill|pkill) exit 0 ;;
esac
echo "$STUB_TOKEN"
exit 0
"""
STUB_NAMES = (
    "python", "python3", "torchrun", "ray", "date", "hostname", "nproc", "whoami", "nvidia-smi",
    "npu-smi", "sleep", "pip", "pip3", "git", "wget", "curl", "huggingface-cli", "hf", "modelscope",
    "mkdir", "rm", "cp", "mv", "ln", "chmod", "touch", "tee", "kill", "pkill", "uv", "srun",
    "scontrol", "conda", "ip", "ifconfig", "accelerate", "deepspeed", "nvcc",
)  # fmt: skip


def corpus_scripts() -> list[tuple[str, str]]:
    """(corpus name, path relative to CORPUS) of every *.sh."""
    out = []
    for name in CORPORA:
        for dirpath, _, files in os.walk(os.path.join(CORPUS, name)):
            for f in files:
                if f.endswith(".sh"):
                    out.append((name, os.path.relpath(os.path.join(dirpath, f), CORPUS)))
    return sorted(out)


def _label(env: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in env.items()) or "default"


class Runner:
    """One bash run of the whole corpus: its own stubs, token, corpus path, HOME and cwd."""

    def __init__(self, base: str, run: int, home: str):
        self.run = run
        self.home = home
        self.root = os.path.join(base, f"run{run}-{'x' * run}")  # paths of different lengths too
        self.stubs = os.path.join(self.root, "bin")
        self.corpus = os.path.join(self.root, "corpus")
        self.work = os.path.join(self.root, "work")
        os.makedirs(self.stubs)
        os.makedirs(self.work)
        os.symlink(CORPUS, self.corpus)
        self.path = f"{self.stubs}:/usr/bin:/bin"
        for name in STUB_NAMES:
            p = os.path.join(self.stubs, name)
            with open(p, "w") as fh:
                fh.write(STUB)
            os.chmod(p, 0o755)
        self.as_nobody = os.geteuid() == 0 and shutil.which("setpriv") and shutil.which("unshare")

    def __call__(self, rel: str, env: dict, job: int) -> tuple[int, list[list[str]]]:
        cwd = os.path.join(self.work, f"job{job}")
        os.makedirs(cwd)
        record = os.path.join(cwd, "record")
        open(record, "w").close()
        if self.as_nobody:
            for p in (cwd, record):
                os.chown(p, NOBODY, NOBODY)
        full = {
            "PATH": self.path,
            "HOME": self.home,
            "STUB_RECORD": record,
            "STUB_TOKEN": f"token{self.run}" + "\n" * self.run + f"{7 - self.run}",
            **env,
        }
        cmd = ["bash", os.path.join(self.corpus, rel)]
        if self.as_nobody:
            cmd = ["unshare", "-n", "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *cmd]
        try:
            proc = subprocess.run(cmd, cwd=cwd, env=full, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = -1
        with open(record, encoding="utf-8", errors="replace") as fh:
            launches = [r.split("\0")[:-1] for r in fh.read().split(RECORD_SEP) if r]
        return code, launches


def run_corpus_bash(jobs: list[tuple[str, dict]]) -> tuple[list[tuple[list, list]], str]:
    """For each (script, profile): the launches of run 1 and of run 2; and HOME."""
    base = tempfile.mkdtemp(prefix="corpus-diff-")
    os.chmod(base, 0o755)
    try:
        home = os.path.join(base, "home")
        os.makedirs(home)
        if os.geteuid() == 0:
            os.chown(home, NOBODY, NOBODY)
        runners = [Runner(base, 1, home), Runner(base, 2, home)]
        for r in runners:
            os.chmod(r.root, 0o755)
        work = [(r, rel, env, i) for i, (rel, env) in enumerate(jobs) for r in runners]
        with ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2))) as pool:
            results = list(pool.map(lambda w: w[0](w[1], w[2], w[3])[1], work))
        return [(results[2 * i], results[2 * i + 1]) for i in range(len(jobs))], home
    finally:
        shutil.rmtree(base, ignore_errors=True)


def field_matches(f, text: str, environ: dict) -> bool:
    """Known text must be equal; an unknown piece stands for the environment's value
    of that variable (HOME), else for text bash expanded to nothing."""
    out = []
    for p in f.pieces:
        if isinstance(p, str):
            out.append(p)
        elif p.label.startswith("environment variable "):
            out.append(environ.get(p.label.rsplit(" ", 1)[-1], ""))
    return "".join(out) == text


def argv_matches(argv, words, environ: dict) -> bool:
    """An evaluator argv against bash's words; a field that is all unknown may be no word."""
    memo: dict = {}

    def go(i: int, j: int) -> bool:
        if i == len(argv):
            return j == len(words)
        key = (i, j)
        if key not in memo:
            f = argv[i]
            ok = j < len(words) and field_matches(f, words[j], environ) and go(i + 1, j + 1)
            if not ok and f.pieces and all(isinstance(p, Unknown) for p in f.pieces):
                ok = go(i + 1, j)
            memo[key] = ok
        return memo[key]

    return go(0, 0)


@dataclass
class Tally:
    static: int = 0
    equal: int = 0
    different: int = 0
    not_reported: int = 0
    failures: list = field(default_factory=list)


def evaluator_launches(rel: str, env: dict) -> list[list]:
    """Each outcome's launches (argv from the module on) in one profile, as validate runs it."""
    path = os.path.join(CORPUS, rel)
    with open(path, "rb") as fh:
        script = parse_script(path, fh.read())
    unset = prof.unset_inputs(prof.scan(script)) | set(env)
    outcomes = evaluate(script, env, unset, launch_of, parsed={})
    return [[la.argv[la.entry :] for la in o.launches] for o in outcomes]


def compare(rel: str, env: dict, first: list, second: list, tally: Tally, environ: dict) -> None:
    static = [la for la, other in zip(first, second, strict=False) if la == other]
    if not static:
        return
    candidates = evaluator_launches(rel, env)
    best, best_score = [], -1
    for launches in candidates or [[]]:
        score = sum(any(argv_matches(a, la, environ) for a in launches) for la in static)
        if score > best_score:
            best, best_score = launches, score
    for i, la in enumerate(first):
        if i >= len(second) or la != second[i]:
            continue
        tally.static += 1
        if any(argv_matches(a, la, environ) for a in best):
            tally.equal += 1
            continue
        if i < len(best):
            tally.different += 1
            shown = [f.display for f in best[i]]
            diff = next(
                (k for k, (a, b) in enumerate(zip(best[i], la, strict=False)) if not field_matches(a, b, environ)),
                min(len(shown), len(la)),
            )
            tally.failures.append(
                f"{rel} [{_label(env)}] launch {i}: differs at argument {diff}: "
                f"bash {la[diff : diff + 2]!r} evaluator {shown[diff : diff + 2]!r} "
                f"({len(la)} vs {len(shown)} arguments)"
            )
        else:
            tally.not_reported += 1
            tally.failures.append(f"{rel} [{_label(env)}] launch {i}: not reported ({la[:3]!r}...)")


def corpus_tallies() -> tuple[dict, float]:
    start = time.monotonic()
    scripts = corpus_scripts()
    jobs = [(rel, env) for _, rel in scripts for env in PROFILES]
    runs, home = run_corpus_bash(jobs)
    tallies = {name: Tally() for name in CORPORA}
    corpus_of = dict((rel, name) for name, rel in scripts)
    for (rel, env), (first, second) in zip(jobs, runs, strict=True):
        compare(rel, env, first, second, tallies[corpus_of[rel]], {"HOME": home})
    return tallies, time.monotonic() - start


def test_evaluator_agrees_with_bash_on_the_corpus():
    tallies, seconds = corpus_tallies()
    summary = "; ".join(
        f"{name}: {t.static} static, {t.equal} equal, {t.different} different, {t.not_reported} not reported"
        for name, t in tallies.items()
    )
    print(f"\n{summary} ({seconds:.1f}s)")
    failures = [f for t in tallies.values() for f in t.failures]
    assert sum(t.static for t in tallies.values()) >= 300, summary
    assert not failures, summary + "\n" + "\n".join(failures)


def test_no_bash_syntax_finding_where_bash_parses():
    wrong = []
    for _, rel in corpus_scripts():
        path = os.path.join(CORPUS, rel)
        if subprocess.run(["bash", "-n", path], capture_output=True).returncode != 0:
            continue
        with open(path, "rb") as fh:
            found = syntax_notes(parse_script(path, fh.read()))
        wrong.extend(f"{rel}:{n.loc.line}:{n.loc.col}: {n.message}" for n in found)
    assert not wrong, "\n".join(wrong)


def test_no_corpus_script_hits_the_profile_cap():
    """In all three corpora, the profiles chosen within the default budget take every arm of
    every switch and meet every pair of switch values."""
    capped = []
    for name in (*CORPORA, "verl-v0.4.1"):
        for dirpath, _, files in os.walk(os.path.join(CORPUS, name)):
            for f in sorted(files):
                if f.endswith(".sh"):
                    path = os.path.join(dirpath, f)
                    with open(path, "rb") as fh:
                        chosen = prof.choose(prof.dimensions(prof.scan(parse_script(path, fh.read()))), 64)
                    if chosen.capped or not chosen.arms:
                        capped.append((os.path.relpath(path, CORPUS), chosen.summary()))
    assert not capped, capped


if __name__ == "__main__":  # a report for development: every disagreement
    t, s = corpus_tallies()
    for name, tally in t.items():
        print(name, tally.static, tally.equal, tally.different, tally.not_reported)
        print("\n".join(tally.failures))
    print(f"{s:.1f}s")
