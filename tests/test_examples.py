"""The reference launch suite: bash -n, shellcheck, and the stack versions agree."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest
from conftest import ROOT

from verl_preflight.stack import drift, header_components, requirement_refs

SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.sh"), recursive=True))
QWEN35 = [s for s in SCRIPTS if "run_qwen3_5_" in s]
REQUIREMENTS = os.path.join(ROOT, "requirements-ascend.txt")
SHELLCHECK = os.path.join(os.path.dirname(sys.executable), "shellcheck")


def read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def test_suite_is_complete():
    names = {os.path.relpath(s, ROOT) for s in SCRIPTS}
    assert names == {
        "examples/grpo_trainer/run_qwen3_5_35b_megatron.sh",
        "examples/grpo_trainer/run_qwen3_5_122b_a10b_megatron.sh",
        "examples/grpo_trainer/run_qwen3_5_397b_megatron.sh",
        "examples/ascend_extras/grpo_trainer/run_qwen3_235b_256k_megatron.sh",
        "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_megatron.sh",
    }


@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_bash_parses(path):
    proc = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_shellcheck_has_nothing_at_warning_or_above(path):
    proc = subprocess.run([SHELLCHECK, "-S", "warning", path], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("path", QWEN35, ids=os.path.basename)
def test_header_versions_match_requirements(path):
    header = header_components(read(path))
    pins = requirement_refs(read(REQUIREMENTS))
    assert set(header) == {
        "Megatron-LM",
        "Megatron-Bridge",
        "MindSpeed",
        "MegatronAdaptor",
        "TransformerEngineNPU",
        "MindSpeed-Ops",
        "MindSpeed-Bridge",
        "flash-linear-attention-npu",
    }
    assert drift(header, pins) == []
    assert header["Megatron-LM"][0] == "core_v0.18.0" and header["Megatron-Bridge"][0] == "v0.5.0"


def test_drift_is_detected():
    text = read(QWEN35[0]).replace("Megatron-Bridge v0.5.0", "Megatron-Bridge v0.4.0")
    problems = drift(header_components(text), requirement_refs(read(REQUIREMENTS)))
    assert [(p[0], p[1], p[2]) for p in problems] == [("Megatron-Bridge", "v0.4.0", "v0.5.0")]


def test_requirements_are_pep508():
    from packaging.requirements import Requirement

    lines = [ln for ln in read(REQUIREMENTS).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    reqs = [Requirement(ln) for ln in lines]
    names = {r.name for r in reqs}
    assert {"torch", "torch-npu", "decorator", "pybind11", "diffusers"} <= names
    torch = next(r for r in reqs if r.name == "torch")
    npu = next(r for r in reqs if r.name == "torch-npu")
    assert str(torch.specifier) == "==2.9.0" and str(npu.specifier).startswith("==2.9.0")
