#!/usr/bin/env bash
# Install the MindSpeed-Bridge training stack for verl's Megatron engine on an
# Ascend host (with the vLLM-Ascend rollout), step by step, from the pins in
# requirements-ascend-base.txt and requirements-ascend.txt at the repository
# root. The Qwen3.5 examples use it when USE_MINDSPEED_BRIDGE=True.
#
# Run on the Ascend host, in the Python 3.12 environment to install into:
#   source /usr/local/Ascend/ascend-toolkit/set_env.sh
#   bash examples/ascend_extras/install_mindspeed_bridge.sh
#
# Steps, in this order
#   0. checks: Python 3.12, the CANN environment (set_env.sh sourced in this
#      shell), git, a supported machine (aarch64 or x86_64), the pins.
#   1. torch, then torch_npu (on x86_64 from the torch CPU index: torch_npu
#      2.9.0.post9 requires torch==2.9.0+cpu there), then the rest of
#      requirements-ascend-base.txt with its dependencies. From here on every
#      pip call, nested ones in setup.py files too, runs with that file as
#      constraints (PIP_CONSTRAINT), so nothing moves those versions.
#   2. the components of requirements-ascend.txt, in its order, each with
#      --no-deps --no-build-isolation (their declared dependencies pull CUDA
#      packages or contradict step 1): vLLM built with VLLM_TARGET_DEVICE=empty,
#      vllm-ascend from its sdist (no Python 3.12 wheel), then the git
#      components cloned into SRC_DIR at their pinned refs and installed
#      editable, as upstream does. vLLM and vllm-ascend then get their other
#      requirements, minus every name step 1 pins.
#   3. triton-ascend again, in case a vLLM requirement brought the CUDA triton
#      (both install a `triton` module).
#   4. flash-linear-attention-npu v26.1.0: the CANN operator package built for
#      FLA_NPU_SOC with its build.sh, installed, then fla_npu built and
#      installed from torch_custom/fla_npu.
#   The stack's own checks (import the packages) close the run.
#
# Knobs (environment)
#   PYTHON       interpreter to install into            (python3)
#   SRC_DIR      where the git components are cloned    ($HOME/ascend-stack-src);
#                keep it: the components are installed editable from there
#   FLA_NPU_SOC  SoC the operators are built for: ascend910b (A2),
#                ascend910_93 (A3), ascend950 (A5)      (ascend910_93)
#   SOC_VERSION  vllm-ascend's SoC name (e.g. ascend910_9391 on A3); unset,
#                vllm-ascend's build asks npu-smi
#   CANN_ENV     CANN's set_env.sh, named in messages   (/usr/local/Ascend/ascend-toolkit/set_env.sh)
#   NNAL_ENV     NNAL/ATB's set_env.sh, named in messages (/usr/local/Ascend/nnal/atb/set_env.sh)
#   MAX_JOBS     parallel compile jobs for the source builds
#
# verl itself is not installed here. From its source tree, after this script
# (the constraints keep torch, torch_npu and transformers where this stack has them):
#   PIP_CONSTRAINT=<this repository>/requirements-ascend-base.txt pip install -r requirements-npu.txt
#   pip install --no-deps -e .
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BASE_REQS=$ROOT/requirements-ascend-base.txt
STACK_REQS=$ROOT/requirements-ascend.txt

PYTHON=${PYTHON:-python3}
SRC_DIR=${SRC_DIR:-$HOME/ascend-stack-src}
FLA_NPU_SOC=${FLA_NPU_SOC:-ascend910_93}
CANN_ENV=${CANN_ENV:-/usr/local/Ascend/ascend-toolkit/set_env.sh}
NNAL_ENV=${NNAL_ENV:-/usr/local/Ascend/nnal/atb/set_env.sh}

say() { printf '\n==> %s\n' "$*"; }
die() {
    printf 'install_mindspeed_bridge.sh: %s\n' "$*" >&2
    exit 1
}
pip_install() { "$PYTHON" -m pip install "$@"; }

# The pin of NAME in FILE: a requirement without its comment (a line with an
# environment marker counts where it holds on this machine), or "URL REF" for a
# git line (`name @ git+URL@REF`, also as a `# build:` line).
pin() {
    "$PYTHON" - "$1" "$2" "$ARCH" <<'PY'
import sys

from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name

name, path, machine = sys.argv[1:]
with open(path, encoding="utf-8") as fh:
    for line in fh:
        if line.startswith("# build:"):
            line = line[len("# build:"):]
        body = line.split(" #", 1)[0].strip()
        if not body or body.startswith(("#", "-")):
            continue
        req = Requirement(body)
        if canonicalize_name(req.name) != canonicalize_name(name):
            continue
        if req.marker is not None and not req.marker.evaluate({"platform_machine": machine}):
            continue
        if req.url:
            url, _, ref = req.url.removeprefix("git+").rpartition("@")
            print(url, ref)
        else:
            print(f"{req.name}{req.specifier}")
        raise SystemExit(0)
raise SystemExit(f"install_mindspeed_bridge.sh: no pin for {name} in {path} on {machine}")
PY
}

# URL's branches and tags fetched into SRC_DIR/DIR (created once, fetched again
# on a re-run) and REF, a tag or a commit, checked out detached; prints the path.
checkout() {
    local url=$1 ref=$2 dir=$SRC_DIR/$3
    git init --quiet "$dir" >&2
    git -C "$dir" fetch --quiet --tags "$url" '+refs/heads/*:refs/remotes/origin/*' >&2
    git -C "$dir" -c advice.detachedHead=false checkout --quiet --detach "$ref" >&2
    git -C "$dir" submodule update --init --recursive --quiet >&2
    printf '%s\n' "$dir"
}

# A git component of requirements-ascend.txt: cloned at its ref, installed
# editable without its dependencies.
install_git() {
    local name=$1 line dir url ref
    line=$(pin "$name" "$STACK_REQS")
    read -r url ref <<<"$line"
    say "$name at $ref"
    dir=$(checkout "$url" "$ref" "$(basename "$url" .git)")
    pip_install --no-deps --no-build-isolation -e "$dir"
}

# DIST's own requirements, minus every name requirements-ascend-base.txt pins
# (the base pin stays), installed under the base constraints.
install_requirements_of() {
    say "requirements of $1, but those requirements-ascend-base.txt pins"
    "$PYTHON" - "$1" "$BASE_REQS" <<'PY'
import subprocess
import sys
from importlib.metadata import requires

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

dist, base = sys.argv[1:]
pinned = set()
with open(base, encoding="utf-8") as fh:
    for line in fh:
        body = line.split("#", 1)[0].strip()
        if body and not body.startswith("-"):
            pinned.add(canonicalize_name(Requirement(body).name))
wanted = []
for text in requires(dist) or []:
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if canonicalize_name(req.name) not in pinned:
        wanted.append(str(req).split(";", 1)[0].strip())
print(f"  {len(wanted)} requirements: {' '.join(wanted)}")
if wanted:
    subprocess.run([sys.executable, "-m", "pip", "install", *wanted], check=True)
PY
}

########################### 0. checks ###########################

say "checks"
"$PYTHON" -c 'import sys; raise SystemExit(sys.version_info[:2] != (3, 12))' ||
    die "$PYTHON is Python $("$PYTHON" -c 'import platform; print(platform.python_version())'); the stack needs 3.12 (Megatron-LM core_v0.18.0, Megatron-Bridge v0.5.0)"
ARCH=$(uname -m)
case "$ARCH" in
    aarch64 | x86_64) ;;
    *) die "machine $ARCH: torch_npu ships for aarch64 and x86_64 only" ;;
esac
command -v git >/dev/null || die "git is needed to fetch the source components"
# The builds of steps 2 and 4 compile against CANN: its environment must be
# in this shell (child processes inherit it).
[[ -n ${ASCEND_HOME_PATH:-${ASCEND_TOOLKIT_HOME:-}} ]] ||
    die "no CANN environment: run \`source $CANN_ENV\` (CANN's set_env.sh) first"
[[ -n ${ATB_HOME_PATH:-} ]] ||
    echo "note: NNAL/ATB is not in the environment; vllm-ascend needs libatb.so at run time (source $NNAL_ENV)"
case "$FLA_NPU_SOC" in
    ascend910b | ascend910_93 | ascend950) ;;
    *) die "FLA_NPU_SOC=$FLA_NPU_SOC: expected ascend910b (A2), ascend910_93 (A3) or ascend950 (A5)" ;;
esac
# every pin installed by name, read before anything is installed
TORCH=$(pin torch "$BASE_REQS")
TORCH_NPU=$(pin torch-npu "$BASE_REQS")
TRITON_ASCEND=$(pin triton-ascend "$BASE_REQS")
VLLM=$(pin vllm "$STACK_REQS")
VLLM_ASCEND=$(pin vllm-ascend "$STACK_REQS")
# the git components of requirements-ascend.txt, in its order
GIT_COMPONENTS=(
    megatron-core
    megatron-adaptor
    transformer-engine-npu
    mindspeed
    megatron-bridge
    mindspeed-ops
    mindspeed-bridge
)
for name in "${GIT_COMPONENTS[@]}"; do
    pin "$name" "$STACK_REQS" >/dev/null
done
FLA_PIN=$(pin flash-linear-attention-npu "$STACK_REQS")
mkdir -p "$SRC_DIR"
echo "Python $("$PYTHON" -c 'import platform; print(platform.python_version())') on $ARCH, CANN at ${ASCEND_HOME_PATH:-$ASCEND_TOOLKIT_HOME}, sources in $SRC_DIR"

########################### 1. index releases ###########################

# The base file carries the torch CPU index (x86_64 +cpu builds) and the
# triton-ascend index as --extra-index-url lines; `-c` applies them too.
say "torch, then torch_npu"
pip_install -c "$BASE_REQS" "$TORCH"
pip_install -c "$BASE_REQS" "$TORCH_NPU"
say "the rest of requirements-ascend-base.txt"
pip_install -r "$BASE_REQS"
export PIP_CONSTRAINT=$BASE_REQS

########################### 2. components, --no-deps ###########################

say "vLLM from its source release (VLLM_TARGET_DEVICE=empty: no kernels, no torch requirement)"
VLLM_TARGET_DEVICE=empty pip_install --no-deps --no-build-isolation --no-binary vllm "$VLLM"
install_requirements_of vllm

say "vllm-ascend from its sdist, built against the installed torch_npu"
pip_install --no-deps --no-build-isolation "$VLLM_ASCEND"
install_requirements_of vllm-ascend

for name in "${GIT_COMPONENTS[@]}"; do
    install_git "$name"
done

########################### 3. triton-ascend ###########################

say "triton-ascend (a CUDA triton from a vLLM requirement would shadow it)"
if "$PYTHON" -m pip show triton >/dev/null 2>&1; then
    "$PYTHON" -m pip uninstall -y triton
fi
pip_install --no-deps --force-reinstall "$TRITON_ASCEND"

########################### 4. flash-linear-attention-npu ###########################

read -r FLA_URL FLA_REF <<<"$FLA_PIN"
say "flash-linear-attention-npu $FLA_REF: CANN operator package for $FLA_NPU_SOC"
FLA_DIR=$(checkout "$FLA_URL" "$FLA_REF" flash-linear-attention-npu)
if [[ -f $FLA_DIR/requirements.txt ]]; then
    pip_install -r "$FLA_DIR/requirements.txt"
fi
rm -rf "$FLA_DIR/build_out"
(cd "$FLA_DIR" && bash build.sh --soc="$FLA_NPU_SOC" --pkg --vendor_name=fla_npu)
shopt -s nullglob
RUN_PACKAGES=("$FLA_DIR"/build_out/fla-npu*.run)
shopt -u nullglob
((${#RUN_PACKAGES[@]} == 1)) || die "expected one build_out/fla-npu*.run after build.sh, found ${#RUN_PACKAGES[@]}"
say "installing the operator package ${RUN_PACKAGES[0]##*/}"
bash "${RUN_PACKAGES[0]}"
say "fla_npu from torch_custom/fla_npu"
(cd "$FLA_DIR/torch_custom/fla_npu" && PYTHON=$PYTHON bash build.sh)

########################### checks ###########################

say "imports"
"$PYTHON" - <<'PY'
import importlib

failed = []
for module in ("torch", "torch_npu", "transformers", "vllm", "vllm_ascend", "megatron.core",
               "megatron.bridge", "mindspeed", "mindspeed_bridge", "fla_npu"):
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # report every module, then fail
        failed.append(module)
        print(f"  {module:16} FAILED: {type(exc).__name__}: {exc}")
    else:
        print(f"  {module:16} {getattr(mod, '__version__', '')}")
raise SystemExit(f"cannot import: {', '.join(failed)}" if failed else 0)
PY
echo
echo "Done. Before a run: source $CANN_ENV (and the set_env.bash the operator"
echo "package installed under \$ASCEND_OPP_PATH/vendors, if CANN does not find"
echo "the fla_npu kernels), then launch with USE_MINDSPEED_BRIDGE=True."
