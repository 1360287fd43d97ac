"""The reference launch suite: bash -n, shellcheck, and the stack versions agree.

examples/ also holds the Ascend stack's installer (install_*.sh): bash -n and shellcheck
cover it too; it is no launch (tests/test_ascend_stack.py checks it against the
requirements files)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest
from conftest import ROOT

from verl_preflight.target.stack import drift, header_components, requirement_branches, requirement_refs

ALL_SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.sh"), recursive=True))
INSTALLERS = [s for s in ALL_SCRIPTS if os.path.basename(s).startswith("install_")]
SCRIPTS = [s for s in ALL_SCRIPTS if s not in INSTALLERS]
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
    assert [os.path.relpath(s, ROOT) for s in INSTALLERS] == ["examples/ascend_extras/install_mindspeed_bridge.sh"]


@pytest.mark.parametrize("path", ALL_SCRIPTS, ids=os.path.basename)
def test_bash_parses(path):
    proc = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("path", ALL_SCRIPTS, ids=os.path.basename)
def test_shellcheck_has_nothing_at_warning_or_above(path):
    proc = subprocess.run([SHELLCHECK, "-S", "warning", path], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("path", QWEN35, ids=os.path.basename)
def test_header_versions_match_requirements(path):
    header = header_components(read(path))
    pins = requirement_refs(read(REQUIREMENTS))
    branches = requirement_branches(read(REQUIREMENTS))
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
    assert drift(header, pins, branches) == []
    assert header["Megatron-LM"][0] == "core_v0.18.0" and header["Megatron-Bridge"][0] == "v0.5.0"
    # MindSpeed's release branch names the TransformerConfig data the tool checks against; the
    # requirement pins the commit taken from it
    assert header["MindSpeed"][0] == "core_r0.18.0" != pins["MindSpeed"] and branches["MindSpeed"] == "core_r0.18.0"


def test_drift_is_detected():
    text = read(QWEN35[0]).replace("Megatron-Bridge v0.5.0", "Megatron-Bridge v0.4.0")
    req = read(REQUIREMENTS)
    problems = drift(header_components(text), requirement_refs(req), requirement_branches(req))
    assert [(p[0], p[1], p[2]) for p in problems] == [("Megatron-Bridge", "v0.4.0", "v0.5.0")]


def test_a_branch_other_than_the_pinned_commits_is_drift():
    text = read(QWEN35[0]).replace("MindSpeed core_r0.18.0", "MindSpeed core_r0.16.0")
    req = read(REQUIREMENTS)
    problems = drift(header_components(text), requirement_refs(req), requirement_branches(req))
    assert [(p[0], p[1]) for p in problems] == [("MindSpeed", "core_r0.16.0")]
