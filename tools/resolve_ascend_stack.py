#!/usr/bin/env python3
"""Resolve the index-pinned lines of the Ascend requirements files on the package index, for
Python 3.12 on aarch64 and x86_64 Linux, and write what the index answered to a JSON stamp.

`make setup` runs this (setup may reach the network); tests/test_ascend_stack.py reads the
stamp and never reaches the network itself. Nothing is installed: every check is
`pip install --dry-run --no-deps --ignore-installed --target <tmp>` with --only-binary :all:,
--python-version 3.12 and the platform's manylinux tags, which reads the wheels' metadata from
the index (PEP 658) without downloading them. A line the file builds from source
(`--no-binary NAME`), or that has no Python 3.12 wheel, is looked up as a source release: pip
fetches it and stops at its metadata (which needs torch here); the file name it fetched is the
answer.

Each line is looked up on PyPI, or on the index its `# index: URL` comment names (the torch CPU
index for the +cpu builds, triton-ascend's index): a version missing there is missing, not
looked for elsewhere. pip's configuration on this machine (extra indexes, find-links,
constraints) is left out so the answer is the registry's. RESOLVE_TIMES=1 prints how long each
look-up took.

Usage: resolve_ascend_stack.py [--out .venv/ascend-stack.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = ("requirements-ascend-base.txt", "requirements-ascend.txt")
PYPI = "https://pypi.org/simple"
PYTHON_VERSION = "3.12"
# glibc 2.17 (manylinux2014) up to 2.35 (Ubuntu 22.04; openEuler 24.03 has 2.38): the wheels an
# Ascend host with such a glibc accepts
_GLIBC = range(17, 39)
PLATFORMS = {
    machine: [f"manylinux_2_{minor}_{machine}" for minor in _GLIBC] + [f"manylinux2014_{machine}", "linux_" + machine]
    for machine in ("aarch64", "x86_64")
}
_UNREACHABLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Name or service not known|"
    r"Temporary failure in name resolution|ConnectTimeout|ReadTimeout|Connection refused|"
    r"Network is unreachable|SSLError|ProxyError"
)
_MISSING = re.compile(r"Could not find a version that satisfies the requirement|No matching distribution found")
_SDIST = re.compile(r"([\w.+-]+\.(?:tar\.gz|zip))\b")
_DOWN: dict[str, bool] = {}  # indexes that did not answer, not asked again


def parse(path: str) -> dict:
    """The options, index-pinned requirements and other lines of one requirements file."""
    out = {"extra_index_urls": [], "no_binary": set(), "requirements": [], "other": []}
    with open(path, encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            body, _, comment = raw.partition(" #")
            body = body.strip()
            if not body or body.startswith("#"):
                if raw.lstrip().startswith("# build:"):
                    out["other"].append((number, raw.strip(), "built by the install script"))
                continue
            if body.startswith("-"):
                flag, _, value = body.partition(" ")
                if flag == "--extra-index-url":
                    out["extra_index_urls"].append(value.strip())
                elif flag == "--no-binary":
                    out["no_binary"].update(canonicalize_name(n) for n in value.split(","))
                continue
            req = Requirement(body)
            if req.url:
                out["other"].append((number, body, "direct reference, not on an index"))
            else:
                served = re.search(r"\bindex:\s*(\S+)", comment)
                out["requirements"].append((number, body, req, served.group(1) if served else PYPI))
    return out


def environment(machine: str) -> dict:
    env = default_environment()
    env.update(
        platform_machine=machine,
        sys_platform="linux",
        platform_system="Linux",
        os_name="posix",
        python_version=PYTHON_VERSION,
        python_full_version=PYTHON_VERSION + ".0",
        implementation_name="cpython",
        platform_python_implementation="CPython",
    )
    return env


def pip_env() -> dict:
    """This machine's pip settings left out: the registry answers, not a local mirror."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if os.environ.get("PIP_CERT"):
        env["PIP_CERT"] = os.environ["PIP_CERT"]
    return env


def pip(args: list[str], index: str, timeout: int) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as target:
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--target", target]
        cmd += ["--index-url", index, "--timeout", str(timeout), "--retries", "1", *args]
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=pip_env())
        if os.environ.get("RESOLVE_TIMES"):
            print(f"{time.monotonic() - start:6.1f}s {index[8:30]} {args[-1]}", file=sys.stderr)
        return proc


def classify(proc: subprocess.CompletedProcess) -> tuple[str, str]:
    text = proc.stdout + proc.stderr
    if _UNREACHABLE.search(text):
        return "unreachable", _last_error(text)
    if _MISSING.search(text):
        return "missing", _last_error(text)
    return "error", _last_error(text)


def _last_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("ERROR")]
    return (lines[-1] if lines else text.strip().splitlines()[-1] if text.strip() else "")[:300]


def wheel(requirement: str, machine: str, index: str, timeout: int) -> dict:
    """A Python 3.12 wheel for `machine` that satisfies the requirement, on `index`."""
    platform_args = [arg for tag in PLATFORMS[machine] for arg in ("--platform", tag)]
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        proc = pip(
            [
                "--no-deps",
                "--only-binary",
                ":all:",
                "--python-version",
                PYTHON_VERSION,
                "--implementation",
                "cp",
                *platform_args,
                "--report",
                report.name,
                requirement,
            ],
            index,
            timeout,
        )
        if proc.returncode == 0:
            with open(report.name, encoding="utf-8") as fh:
                item = json.load(fh)["install"][0]
            url = item["download_info"]["url"]
            meta = item["metadata"]
            return {
                "status": "wheel",
                "index": index,
                "file": url.rsplit("/", 1)[-1],
                "version": meta["version"],
                "requires_dist": meta.get("requires_dist", []),
            }
    status, detail = classify(proc)
    return {"status": status, "index": index, "detail": detail}


_SDIST_LOCK = threading.Lock()
_SDISTS: dict[tuple[str, str], dict] = {}


def sdist(requirement: str, index: str, timeout: int) -> dict:
    """The source release of the requirement on `index`: pip fetches it and stops at its metadata
    (once for both machines: a source release is the same file for every platform)."""
    with _SDIST_LOCK:
        if (requirement, index) not in _SDISTS:
            _SDISTS[requirement, index] = _sdist(requirement, index, timeout)
        return dict(_SDISTS[requirement, index])


def _sdist(requirement: str, index: str, timeout: int) -> dict:
    name = canonicalize_name(Requirement(requirement).name)
    proc = pip(["--no-deps", "--no-build-isolation", "--no-binary", name, requirement], index, timeout)
    text = proc.stdout + proc.stderr
    fetched = [f for f in _SDIST.findall(text) if canonicalize_name(re.split(r"-\d", f, maxsplit=1)[0]) == name]
    if fetched:
        note = "metadata built here" if proc.returncode == 0 else "fetched; its metadata build needs the target host"
        return {"status": "sdist", "index": index, "file": fetched[0], "detail": note}
    status, detail = classify(proc)
    return {"status": status, "index": index, "detail": detail}


def look_up(requirement: str, machine: str, index: str, from_source: bool) -> dict:
    """A wheel for the machine on `index`, else the source release there. `unverified`: the
    index did not answer."""
    if _DOWN.get(index):
        return {"status": "unverified", "index": index, "detail": f"{index} did not answer"}
    timeout = 60 if index == PYPI else 10
    answer = sdist(requirement, index, timeout) if from_source else wheel(requirement, machine, index, timeout)
    if answer["status"] == "missing" and not from_source:
        source = sdist(requirement, index, timeout)
        if source["status"] == "sdist":
            source["detail"] = f"no Python {PYTHON_VERSION} wheel for {machine}; " + source["detail"]
            answer = source
    if answer["status"] == "unreachable":
        _DOWN[index] = True
        answer = {**answer, "status": "unverified", "detail": f"{index} did not answer: {answer['detail']}"}
    return answer


def closure(requirements: list[str], machine: str, indexes: list[str]) -> dict:
    """The pinned lines together with their dependencies, as pip resolves them for `machine`."""
    platform_args = [arg for tag in PLATFORMS[machine] for arg in ("--platform", tag)]
    extra = [arg for index in indexes[1:] for arg in ("--extra-index-url", index)]
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        proc = pip(
            [
                "--only-binary",
                ":all:",
                "--python-version",
                PYTHON_VERSION,
                "--implementation",
                "cp",
                *platform_args,
                *extra,
                "--report",
                report.name,
                *requirements,
            ],
            indexes[0],
            60,
        )
        if proc.returncode == 0:
            with open(report.name, encoding="utf-8") as fh:
                items = json.load(fh)["install"]
            return {
                "status": "resolved",
                "indexes": indexes,
                "packages": sorted(f"{i['metadata']['name']}=={i['metadata']['version']}" for i in items),
            }
    status, detail = classify(proc)
    return {"status": "conflict" if status in ("missing", "error") else status, "indexes": indexes, "detail": detail}


def _extra_only(text: str) -> bool:
    """A requirement that holds only with an extra (`...; extra == "dev"`)."""
    marker = Requirement(text).marker
    return marker is not None and "extra" in str(marker)


def digest(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, ".venv", "ascend-stack.json"))
    args = ap.parse_args(argv)

    parsed = {name: parse(os.path.join(ROOT, name)) for name in FILES}
    jobs = []  # (entry, machine, requirement, index, from source)
    lines = []
    for name, p in parsed.items():
        for number, text, req, index in p["requirements"]:
            entry = {
                "file": name,
                "line": number,
                "requirement": text,
                "name": canonicalize_name(req.name),
                "specifier": str(req.specifier),
                "index": index,
                "checks": {},
            }
            lines.append(entry)
            from_source = canonicalize_name(req.name) in p["no_binary"]
            for machine in PLATFORMS:
                if req.marker is not None and not req.marker.evaluate(environment(machine)):
                    entry["checks"][machine] = {"status": "not-this-machine"}
                    continue
                plain = f"{req.name}{req.specifier}"
                jobs.append((entry, machine, plain, index, from_source))
        for number, text, why in p["other"]:
            lines.append({"file": name, "line": number, "requirement": text, "skipped": why})

    def run(job):
        entry, machine, plain, index, from_source = job
        return entry, machine, look_up(plain, machine, index, from_source)

    # the index answers slowly, the machine is not the limit: a few look-ups at a time
    with ThreadPoolExecutor(max_workers=4) as pool:
        for entry, machine, answer in pool.map(run, jobs):
            entry["checks"][machine] = answer

    reachable: dict[str, bool] = {}
    for entry in lines:
        for answer in entry.get("checks", {}).values():
            if "index" in answer:
                ok = answer["status"] != "unverified"
                reachable[answer["index"]] = reachable.get(answer["index"], False) or ok

    closures = {}
    for machine in PLATFORMS:
        pinned = [
            e
            for e in lines
            if e["file"] == "requirements-ascend-base.txt"
            and "checks" in e
            and e["checks"][machine]["status"] != "not-this-machine"
        ]
        found = [e for e in pinned if e["checks"][machine]["status"] in ("wheel", "sdist")]
        left_out = sorted(e["name"] for e in pinned if e not in found)
        needed = sorted(
            {
                canonicalize_name(Requirement(text).name)
                for e in found
                for text in e["checks"][machine].get("requires_dist", [])
                if not _extra_only(text)
            }
            & set(left_out)
        )
        indexes = [PYPI] + sorted({e["checks"][machine]["index"] for e in found} - {PYPI})
        if needed:
            closures[machine] = {
                "status": "unverified",
                "left_out": left_out,
                "detail": f"pinned lines need {', '.join(needed)}, which no reachable index served",
            }
            continue
        closures[machine] = closure([f"{e['name']}{e['specifier']}" for e in found], machine, indexes)
        closures[machine]["left_out"] = left_out

    stamp = {
        "tool": "tools/resolve_ascend_stack.py",
        "python_version": PYTHON_VERSION,
        "inputs": {name: digest(os.path.join(ROOT, name)) for name in FILES},
        "indexes": {index: ("reachable" if ok else "unreachable") for index, ok in sorted(reachable.items())},
        "lines": lines,
        "closure": closures,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(stamp, fh, indent=1, sort_keys=True)
        fh.write("\n")
    counts: dict[str, int] = {}
    for entry in lines:
        for answer in entry.get("checks", {}).values():
            counts[answer["status"]] = counts.get(answer["status"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    closed = ", ".join(f"{m}: {c['status']}" for m, c in closures.items())
    print(f"{os.path.relpath(args.out, ROOT)}: {summary}; with dependencies {closed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
