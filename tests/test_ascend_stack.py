"""The MindSpeed-Bridge stack on Ascend installs as written.

requirements-ascend-base.txt (index releases, installed with their dependencies) and
requirements-ascend.txt (the components, each installed with --no-deps, and the
flash-linear-attention-npu build) are read here line by line: every line is PEP 508 and
pinned, every git ref is a tag or a commit. Whether each pinned release exists for Python
3.12 on aarch64 and x86_64 Linux is what the package index answered at `make setup`
(tools/resolve_ascend_stack.py writes .venv/ascend-stack.json; these tests read it and never
reach the network): a version the index does not have fails, a line whose index was not
reachable at setup is reported as a skip. The installer,
examples/ascend_extras/install_mindspeed_bridge.sh, never runs here: it is read, checked by
the project's validator, and compared with the requirements files.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

BASE = os.path.join(ROOT, "requirements-ascend-base.txt")
STACK = os.path.join(ROOT, "requirements-ascend.txt")
FILES = {"requirements-ascend-base.txt": BASE, "requirements-ascend.txt": STACK}
INSTALLER = os.path.join(ROOT, "examples", "ascend_extras", "install_mindspeed_bridge.sh")
STAMP = os.path.join(ROOT, ".venv", "ascend-stack.json")
MACHINES = ("aarch64", "x86_64")

COMMIT = re.compile(r"^[0-9a-f]{40}$")
# a release tag: v0.5.0, core_v0.18.0, v26.1.0 (a branch such as main, master or core_r0.18.0 is
# pinned by its commit instead)
RELEASE_TAG = re.compile(r"^(?:v|core_v)?\d+\.\d+\.\d+(?:[.-]?(?:post|rc|a|b)\d+)?$")


def lines_of(path: str):
    """(line number, kind, text, comment) for every line that is not blank or a plain comment:
    kind is "option", "requirement" or "build"."""
    with open(path, encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            stripped = raw.strip()
            if stripped.startswith("# build:"):
                body, _, comment = stripped[len("# build:") :].partition(" #")
                yield number, "build", body.strip(), comment
                continue
            body, _, comment = stripped.partition(" #")
            body = body.strip()
            if not body or body.startswith("#"):
                continue
            yield number, "option" if body.startswith("-") else "requirement", body, comment


def requirements_of(path: str) -> list[tuple[int, str, Requirement, str]]:
    return [(n, kind, Requirement(body), comment) for n, kind, body, comment in lines_of(path) if kind != "option"]


def environment(machine: str) -> dict:
    env = default_environment()
    env.update(platform_machine=machine, sys_platform="linux", platform_system="Linux", python_version="3.12")
    return env


def pins_for(machine: str) -> dict[str, Requirement]:
    """{name: requirement} of the index-pinned lines that hold on `machine`, both files."""
    out = {}
    for path in FILES.values():
        for _, kind, req, _ in requirements_of(path):
            if (
                kind == "requirement"
                and not req.url
                and (req.marker is None or req.marker.evaluate(environment(machine)))
            ):
                out[canonicalize_name(req.name)] = req
    return out


# ---------------------------------------------------------------- the files, line by line


@pytest.mark.parametrize("name", FILES)
def test_every_line_is_pep508_and_pinned(name):
    problems = []
    for number, kind, body, comment in lines_of(FILES[name]):
        where = f"{name}:{number}"
        if kind == "option":
            flag, _, value = body.partition(" ")
            if flag == "--extra-index-url":
                if not value.startswith("https://"):
                    problems.append(f"{where}: an index over https, not {value!r}")
            elif flag != "--no-binary":
                problems.append(f"{where}: option {flag} (only --extra-index-url and --no-binary are used)")
            continue
        req = Requirement(body)  # raises on a line that is not PEP 508
        if req.url:
            url, _, ref = req.url.rpartition("@")
            if not url.startswith("git+https://"):
                problems.append(f"{where}: {req.name} comes from {url}, not a git+https:// repository")
            if not (COMMIT.match(ref) or RELEASE_TAG.match(ref)):
                problems.append(f"{where}: {req.name} at {ref!r}: a ref that moves; pin a release tag or a commit")
            if "branch" in comment and not COMMIT.match(ref):
                problems.append(f"{where}: `# branch` belongs to a commit pin, not {ref!r}")
            continue
        specs = list(req.specifier)
        if kind == "build" or len(specs) != 1 or specs[0].operator != "==" or "*" in specs[0].version:
            problems.append(f"{where}: {body!r} is not pinned with == to one release")
    assert problems == []


def test_every_extra_index_serves_a_line_that_names_it():
    """A line from another index than PyPI says which (`# index: URL`, one of the file's
    --extra-index-url lines); an extra index no line names is one too many."""
    for name, path in FILES.items():
        extra = {body.split(None, 1)[1] for _, kind, body, _ in lines_of(path) if body.startswith("--extra-index-url")}
        named = {}
        for number, kind, body, comment in lines_of(path):
            m = re.search(r"\bindex:\s*(\S+)", comment)
            if m:
                assert kind == "requirement" and not Requirement(body).url, f"{name}:{number}"
                named[m.group(1)] = number
        assert set(named) <= extra, f"{name}: `# index:` names an index the file does not add"
        assert extra <= set(named), f"{name}: no line comes from {sorted(extra - set(named))}"


def test_no_binary_names_a_pinned_line():
    for name, path in FILES.items():
        pinned = {canonicalize_name(r.name) for _, _, r, _ in requirements_of(path)}
        for number, kind, body, _ in lines_of(path):
            if kind == "option" and body.startswith("--no-binary"):
                named = {canonicalize_name(n) for n in body.split(None, 1)[1].split(",")}
                assert named <= pinned, f"{name}:{number}"


def test_each_index_release_is_pinned_once_per_machine():
    for machine in MACHINES:
        seen: dict[str, int] = {}
        for path in FILES.values():
            for number, kind, req, _ in requirements_of(path):
                if (
                    kind == "requirement"
                    and not req.url
                    and (req.marker is None or req.marker.evaluate(environment(machine)))
                ):
                    name = canonicalize_name(req.name)
                    assert name not in seen, f"{name} pinned twice on {machine} (lines {seen[name]}, {number})"
                    seen[name] = number


def test_the_git_components_come_after_the_releases_they_build_against():
    """requirements-ascend.txt lists vLLM and vllm-ascend, then the git components, then the
    build lines; the base file carries torch and torch_npu."""
    kinds = [("git" if r.url and kind == "requirement" else kind) for _, kind, r, _ in requirements_of(STACK)]
    assert kinds == sorted(kinds, key=["requirement", "git", "build"].index)
    base = pins_for("aarch64")
    assert {"torch", "torch-npu", "triton-ascend", "transformers"} <= set(base)
    build = [r for _, kind, r, _ in requirements_of(STACK) if kind == "build"]
    assert [r.name for r in build] == ["flash-linear-attention-npu"]


# ------------------------------------------------------------ what the index answered at setup


@pytest.fixture(scope="module")
def stamp():
    if not os.path.exists(STAMP):
        pytest.skip("no .venv/ascend-stack.json: `make setup` resolves the Ascend pins on the package index")
    with open(STAMP, encoding="utf-8") as fh:
        doc = json.load(fh)
    for name, path in FILES.items():
        with open(path, "rb") as fh:
            if doc["inputs"].get(name) != hashlib.sha256(fh.read()).hexdigest():
                pytest.skip(f".venv/ascend-stack.json predates {name}: `make setup` resolves it again")
    if doc["indexes"].get("https://pypi.org/simple") != "reachable":
        pytest.skip("PyPI was not reachable when `make setup` resolved the Ascend pins")
    return doc


def _checked(stamp) -> list[dict]:
    return [entry for entry in stamp["lines"] if "checks" in entry]


def test_every_index_pinned_line_was_looked_up(stamp):
    asked = {(e["file"], e["line"]) for e in _checked(stamp)}
    for name, path in FILES.items():
        for number, kind, req, _ in requirements_of(path):
            if kind == "requirement" and not req.url:
                assert (name, number) in asked, f"{name}:{number} {req} was not looked up"
    for entry in _checked(stamp):
        assert set(entry["checks"]) == set(MACHINES)


def test_every_pinned_release_exists_for_python_3_12(stamp):
    """A wheel for Python 3.12 on the machine, or the source release (vLLM is built from it;
    vllm-ascend has no 3.12 wheel). `missing`: the index answered and has no such release."""
    bad = [
        f"{e['file']}:{e['line']} {e['requirement']} on {machine}: {a['status']} ({a.get('detail', '')})"
        for e in _checked(stamp)
        for machine, a in e["checks"].items()
        if a["status"] not in ("wheel", "sdist", "not-this-machine", "unverified")
    ]
    assert bad == []


def test_lines_served_by_other_indexes_were_verified(stamp):
    unverified = sorted(
        {f"{e['name']} ({m})" for e in _checked(stamp) for m, a in e["checks"].items() if a["status"] == "unverified"}
    )
    down = [index for index, state in stamp["indexes"].items() if state != "reachable"]
    if unverified:
        pytest.skip(f"not verified at setup, {', '.join(down)} unreachable: {', '.join(unverified)}")


def test_the_sources_built_on_the_host_are_released(stamp):
    """vLLM (--no-binary) and vllm-ascend (no Python 3.12 wheel) come from their source releases."""
    answers = {e["name"]: e["checks"] for e in _checked(stamp) if e["file"] == "requirements-ascend.txt"}
    for machine in MACHINES:
        assert answers["vllm"][machine]["status"] == "sdist"
        assert answers["vllm"][machine]["file"] == "vllm-0.19.1.tar.gz"
        assert answers["vllm-ascend"][machine]["status"] in ("wheel", "sdist")


def test_the_pins_satisfy_each_others_requirements(stamp):
    """Each pinned wheel's own requirements on another pinned release hold for the pin on that
    machine: torch_npu 2.9.0.post9 requires torch==2.9.0 on aarch64 and torch==2.9.0+cpu on
    x86_64 (the CPU index build), torchvision 0.24.0 torch==2.9.0, and so on."""
    checked = 0
    for machine in MACHINES:
        pins = pins_for(machine)
        for entry in _checked(stamp):
            answer = entry["checks"][machine]
            for text in answer.get("requires_dist", []):
                dep = Requirement(text)
                if dep.marker is not None and not dep.marker.evaluate({**environment(machine), "extra": ""}):
                    continue
                pin = pins.get(canonicalize_name(dep.name))
                if pin is None:
                    continue
                version = Version(next(iter(pin.specifier)).version)
                assert dep.specifier.contains(version, prereleases=True), (
                    f"on {machine}, {entry['name']} {answer['version']} requires {text}; the pin is {pin}"
                )
                checked += 1
    assert checked >= 4  # torch_npu -> torch on both machines, torchvision and torchaudio -> torch


def test_torch_npu_requires_the_torch_each_machine_pins(stamp):
    """The reason x86_64 takes torch from the CPU index, read from torch_npu's own metadata."""
    npu = next(e for e in _checked(stamp) if e["name"] == "torch-npu")
    for machine in MACHINES:
        wanted = [Requirement(t) for t in npu["checks"][machine]["requires_dist"] if Requirement(t).name == "torch"]
        assert [str(r.specifier) for r in wanted] == [str(pins_for(machine)["torch"].specifier)]
    assert str(pins_for("x86_64")["torch"].specifier) == "==2.9.0+cpu"


def test_the_base_file_resolves_with_its_dependencies(stamp):
    """pip resolves the base file's lines together with all their dependencies (aarch64: every
    line but those only another, unreachable, index serves)."""
    results = stamp["closure"]
    assert results["aarch64"]["status"] in ("resolved", "unverified"), results["aarch64"].get("detail")
    for machine, result in results.items():
        assert result["status"] != "conflict", f"{machine}: {result.get('detail')}"
    unverified = [m for m, r in results.items() if r["status"] != "resolved"]
    if unverified:
        pytest.skip(
            f"dependencies not resolved at setup on {', '.join(unverified)}: "
            + "; ".join(results[m].get("detail", "") for m in unverified)
        )


# ------------------------------------------------------------------------- the installer


def installer_code() -> list[str]:
    """The installer's lines, comments and blank lines blanked (line numbers kept)."""
    with open(INSTALLER, encoding="utf-8") as fh:
        return ["" if ln.lstrip().startswith("#") else ln for ln in fh.read().splitlines()]


def first(code: list[str], pattern: str, start: int = 0) -> int:
    rx = re.compile(pattern)
    for number, line in enumerate(code[start:], start=start):
        if rx.search(line):
            return number
    raise AssertionError(f"the installer has no line matching {pattern!r}")


def test_the_installer_passes_the_validator_cleanly():
    proc = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "tools", "validate_scripts.py"),
            "--strict",
            "--no-cache",
            "--format",
            "json",
            INSTALLER,
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["findings"] == []


def test_the_installer_is_strict_bash():
    code = installer_code()
    with open(INSTALLER, encoding="utf-8") as fh:
        assert fh.readline().strip() == "#!/usr/bin/env bash"
    assert first(code, r"^set -euo pipefail$") < first(code, r"pip_install ")


def test_the_installer_reads_every_pin_from_the_requirements_files():
    """Each component is installed from the pin of its requirements file, never from a version
    written in the script: `VAR=$(pin NAME FILE)` for the index releases, the git components as
    the GIT_COMPONENTS array in requirements-ascend.txt's order, the build line by its name."""
    code = "\n".join(installer_code())
    assert not re.search(r"==\d", code), "a version is written in the installer"
    stack = requirements_of(STACK)
    for _, kind, req, _ in stack:
        if kind == "requirement" and not req.url:
            assert re.search(rf'=\$\(pin {re.escape(req.name)} "\$STACK_REQS"\)', code), req.name
    git = [canonicalize_name(r.name) for _, kind, r, _ in stack if kind == "requirement" and r.url]
    array = re.search(r"GIT_COMPONENTS=\(\n(.*?)\n\)", code, re.S)
    assert array and array.group(1).split() == git
    (build,) = [r.name for _, kind, r, _ in stack if kind == "build"]
    assert re.search(rf'=\$\(pin {re.escape(build)} "\$STACK_REQS"\)', code)
    for name in ("torch", "torch-npu", "triton-ascend"):
        assert re.search(rf'=\$\(pin {re.escape(name)} "\$BASE_REQS"\)', code), name


def test_the_installer_installs_in_order():
    """Python 3.12 and CANN are checked first; torch before torch_npu before the rest of the base
    file; then vLLM, vllm-ascend and the git components, each with --no-deps; then the CANN
    operator package of flash-linear-attention-npu, built for FLA_NPU_SOC and installed, before
    fla_npu."""
    code = installer_code()
    steps = [
        first(code, r"sys\.version_info\[:2\] != \(3, 12\)"),
        first(code, r"ASCEND_HOME_PATH"),
        first(code, r'^pip_install .*"\$TORCH"$'),
        first(code, r'^pip_install .*"\$TORCH_NPU"$'),
        first(code, r'^pip_install -r "\$BASE_REQS"$'),
        first(code, r"^export PIP_CONSTRAINT=\$BASE_REQS$"),
        first(code, r'pip_install .*"\$VLLM"$'),
        first(code, r'pip_install .*"\$VLLM_ASCEND"$'),
        first(code, r'^for name in "\$\{GIT_COMPONENTS\[@\]\}"; do$', first(code, r"^export PIP_CONSTRAINT")),
        first(code, r'bash build\.sh --soc="\$FLA_NPU_SOC" --pkg'),
        first(code, r'^bash "\$\{RUN_PACKAGES\[0\]\}"$'),
        first(code, r"torch_custom/fla_npu.*bash build\.sh"),
    ]
    assert steps == sorted(steps), steps
    for pattern in (r'"\$VLLM"$', r'"\$VLLM_ASCEND"$', r'-e "\$dir"$'):
        line = code[first(code, pattern)]
        assert "--no-deps" in line and "--no-build-isolation" in line, line
    assert "VLLM_TARGET_DEVICE=empty" in code[first(code, r'"\$VLLM"$')]


def test_the_operators_are_built_for_a3_unless_told_otherwise():
    code = installer_code()
    assert code[first(code, r"^FLA_NPU_SOC=")] == "FLA_NPU_SOC=${FLA_NPU_SOC:-ascend910_93}"
