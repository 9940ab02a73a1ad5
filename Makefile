# The README's two commands: `make demo` and `make test`. Both work on a fresh machine.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
SLMBENCH := $(VENV)/bin/slmbench
# llama-cpp-python compiles from source; these flags halve the cold build (~3.5 min on 2 cores).
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2
# ggml is built for this CPU (-march=native) but without its AMX kernels: on Sapphire Rapids
# class CPUs the pinned ggml's AMX matmul crashes the process (a general protection fault in
# ggml_backend_amx_mul_mat, llama.cpp issue 20824, unfixed in this pin). Both builds below take
# the flags, so `llamacpp:` and `llamaserver:` still run the same kernels; BUILD_TAG names them.
ifeq ($(shell uname -m),x86_64)
GGML_FLAGS := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
endif
BUILD_TAG := noamx
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DCMAKE_C_FLAGS='$(GGML_FLAGS)' -DCMAKE_CXX_FLAGS='$(GGML_FLAGS)'
# The llama-cpp-python pin (the `embedded` extra of pyproject.toml) and the slmbench home
# (core/paths.py), where the wheel and llama-server built from that pin are cached.
LLAMA_CPP_PYTHON := $(shell sed -n 's/.*llama-cpp-python\[server\]==\([0-9.]*\).*/\1/p' pyproject.toml)
SLMBENCH_HOME := $(shell python3 -c "import runpy; print(runpy.run_path('src/slmbench/core/paths.py')['home']())")
LLAMA_WHEEL_DIR = $(SLMBENCH_HOME)/wheels/llama-cpp-python-$(LLAMA_CPP_PYTHON)-$(BUILD_TAG)
# The confseq pin (pyproject.toml) and its wheel's folder, per CPython version (install-demo).
CONFSEQ := $(shell sed -n 's/.*"confseq==\([0-9.]*\)".*/\1/p' pyproject.toml)
PYTAG := $(shell python3 -c "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')")
CONFSEQ_WHEEL_DIR = $(SLMBENCH_HOME)/wheels/confseq-$(CONFSEQ)-$(PYTAG)
DEMO_MODEL ?= qwen2.5-coder-0.5b
# the 0.5B's trained context, as slmbench.agents.runner.config.DEMO_MODEL (4096 is the default)
DEMO_N_CTX ?= 32768
TEST_MODELS ?= smollm2-135m qwen2.5-coder-0.5b

.PHONY: demo test install install-demo build-deps system-deps sandbox-deps models lint clean llama-server \
	quant-venvs study-sitting study-stop test-portable

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# `install`: the package with the embedded (llama.cpp) and hf (transformers, CPU torch from local
# disk) backends, the Ray executor (ray core) and the test tools, over `install-demo`.
install: install-demo
	$(PY) -m pip install -q -e '.[embedded,hf,ray,test]'

# What `make demo` needs and no more: the package with the embedded backend (no torch, Ray or
# test tools, which only the tests and the hf/ray backends use), from the two cached wheels.
install-demo: $(PY) $(LLAMA_WHEEL_DIR)/built $(CONFSEQ_WHEEL_DIR)/built
	$(PY) -m pip install -q --no-deps --force-reinstall $(LLAMA_WHEEL_DIR)/llama_cpp_python-*.whl
	$(PY) -m pip install -q $(CONFSEQ_WHEEL_DIR)/confseq-*.whl -e '.[embedded]'

# confseq (anytime-valid confidence sequences, Part B) ships source only: its isolated build
# fails on Python 3.11 (its build pins a pybind11 too old for 3.11), so it is built once against
# a current pybind11 without isolation, with Boost headers from build-deps (libboost-dev), into
# the slmbench home beside the llama.cpp wheel (per Python version: it is a CPython extension).
# A warm install then needs neither the build tools nor Boost.
$(CONFSEQ_WHEEL_DIR)/built: | $(PY) build-deps
	@set -euo pipefail; rm -rf "$(@D)" "$(@D).tmp"; mkdir -p "$(@D).tmp"; \
	echo "building confseq==$(CONFSEQ) (once; cached in $(@D))"; \
	$(PY) -m pip install -q scikit-build cmake ninja 'pybind11>=2.11'; \
	$(PY) -m pip wheel -q --no-deps --no-build-isolation "confseq==$(CONFSEQ)" -w "$(@D).tmp"; \
	mv "$(@D).tmp" "$(@D)"; touch "$@"

# The llama-cpp-python wheel, compiled once with the flags above into the slmbench home (pip's
# own wheel cache would hand back a wheel built with other flags). Never committed.
# $(call build_wheel,TAG): the wheel into the recipe's folder, with the CMAKE_ARGS in force.
define build_wheel
	@set -euo pipefail; rm -rf "$(@D)"; mkdir -p "$(@D).tmp"; start=$$(date +%s); \
	echo "building llama-cpp-python==$(LLAMA_CPP_PYTHON) ($(1); a few minutes)"; \
	$(PY) -m pip wheel -q --no-deps --no-cache-dir --no-binary llama-cpp-python \
	  "llama-cpp-python==$(LLAMA_CPP_PYTHON)" -w "$(@D).tmp"; \
	mv "$(@D).tmp" "$(@D)"; touch "$@"; echo "built in $$(( $$(date +%s) - start )) s"
endef

$(LLAMA_WHEEL_DIR)/built: | $(PY)
	$(call build_wheel,$(BUILD_TAG))

# `make test-portable`: the model-output tests under another build's kernels. ggml built without
# -march=native takes its generic x86-64 set (SSE4.2, AVX, AVX2, FMA, F16C; no AVX-512, no AMX),
# as on the Zen 3 machine where a batching-exact test once failed. The wheel goes to its own
# folder, is unpacked into its own target (never into the venv) and put first on PYTHONPATH;
# the tests run as in `make test`, then the drift between the builds is measured and
# docs/results/chunking-drift.md regenerated. Not part of `make test` (a second compile).
PORTABLE_TAG := portable-avx2
PORTABLE_WHEEL_DIR = $(SLMBENCH_HOME)/wheels/llama-cpp-python-$(LLAMA_CPP_PYTHON)-$(PORTABLE_TAG)
PORTABLE_SITE = $(SLMBENCH_HOME)/site/llama-cpp-python-$(LLAMA_CPP_PYTHON)-$(PORTABLE_TAG)
$(PORTABLE_WHEEL_DIR)/built: export CMAKE_ARGS = -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX512=OFF
$(PORTABLE_WHEEL_DIR)/built: | $(PY)
	$(call build_wheel,$(PORTABLE_TAG))

test-portable: install system-deps models llama-server $(PORTABLE_WHEEL_DIR)/built
	rm -rf "$(PORTABLE_SITE)"
	$(PY) -m pip install -q --no-deps --no-compile --target "$(PORTABLE_SITE)" \
	  $(PORTABLE_WHEEL_DIR)/llama_cpp_python-*.whl
	PYTHONPATH="$(PORTABLE_SITE)" $(PY) benchmarks/chunking_drift.py check --site "$(PORTABLE_SITE)"
	PYTHONPATH="$(PORTABLE_SITE)" $(PY) -m pytest -m embedded -p no:cacheprovider
	$(PY) benchmarks/chunking_drift.py measure --build native --hf
	PYTHONPATH="$(PORTABLE_SITE)" $(PY) benchmarks/chunking_drift.py measure --build portable --hf
	$(PY) benchmarks/chunking_drift.py render

# Installs the missing ones of CHECK:PACKAGE pairs (CHECK: a command, or a file's path) with
# apt-get when root, else stops with the command to run.
define need_packages
	@need=""; \
	for pair in $(1); do c=$${pair%%:*}; \
	  { [ -e "$$c" ] || command -v "$$c"; } >/dev/null || need="$$need $${pair#*:}"; done; \
	if [ -n "$$need" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $$need; \
	  else echo "missing system packages:$$need (run: sudo apt-get install -y$$need)"; exit 1; fi; \
	fi
endef

# Headers the install compiles against: Boost, for confseq.
build-deps:
	$(call need_packages,/usr/include/boost/version.hpp:libboost-dev)

# The one system package the demo runs with: bubblewrap (the code sandbox).
sandbox-deps:
	$(call need_packages,bwrap:bubblewrap)

# System packages the tests need: bubblewrap (the code sandbox) and chromium (the HTML report test).
system-deps:
	$(call need_packages,bwrap:bubblewrap chromium:chromium)

models: install
	@for m in $(TEST_MODELS); do $(SLMBENCH) pull $$m || exit 1; done

# Third-party GPTQ / AWQ (scripts/quantize_external.py), each in its own venv: their pins
# clash with the project's (llmcompressor 0.14.0.1 needs transformers<=5.17.0; the project
# runs 5.24). auto-round 0.16.1 (AWQ, SignRound; exports auto_awq / auto_gptq) and
# llmcompressor 0.14.0.1 (GPTQ) both run on torch 2.13.0 on the CPU.
QUANT_PY ?= python3.11
AUTOROUND_VENV ?= $(HOME)/.cache/slmbench/venv-autoround
LLMC_VENV ?= $(HOME)/.cache/slmbench/venv-llmcompressor
AUTOROUND_PINS := torch==2.13.0 transformers==5.24.0 gguf==0.19.0 accelerate==1.15.0 auto-round==0.16.1
LLMC_PINS := torch==2.13.0 llmcompressor==0.14.0.1 gguf==0.19.0
quant-venvs:
	[ -x $(AUTOROUND_VENV)/bin/python ] || $(QUANT_PY) -m venv $(AUTOROUND_VENV)
	$(AUTOROUND_VENV)/bin/pip install -q $(AUTOROUND_PINS)
	[ -x $(LLMC_VENV)/bin/python ] || $(QUANT_PY) -m venv $(LLMC_VENV)
	$(LLMC_VENV)/bin/pip install -q $(LLMC_PINS)

demo: install-demo sandbox-deps
	$(SLMBENCH) pull $(DEMO_MODEL)
	$(SLMBENCH) demo --model 'llamacpp:$(DEMO_MODEL)?n_ctx=$(DEMO_N_CTX)'

# The suite in two passes, every test in one of them: the tests that need no model on the
# machine's cores (at most 4 workers, each test file on one; `TEST_WORKERS=0`: one process),
# then the ones that run a real model (`embedded`) in one process, as llama.cpp's threads
# spin and slow each other down several-fold when two models share two cores, with the
# `serial` ones (the sandbox's limit tests: RLIMIT_NPROC counts its uid host-wide).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)

test: install system-deps models llama-server
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m pytest -m "not embedded and not serial" -n $(TEST_WORKERS) --dist loadfile --durations=15
	$(PY) -m pytest -m "embedded or serial" --durations=10

# llama.cpp's own server, built from the llama.cpp that the pinned llama-cpp-python sdist vendors,
# so `llamaserver:` runs the same kernels as `llamacpp:`. Cached under the slmbench home: a second
# `make llama-server` does nothing. About 4-5 min cold on 2 cores; never committed.
# The pin is read from pyproject.toml (the `embedded` extra); the directory from core/paths.py.
LLAMA_SERVER_BIN = $(SLMBENCH_HOME)/bin/llama-server-$(LLAMA_CPP_PYTHON)-$(BUILD_TAG)

llama-server: $(LLAMA_SERVER_BIN)

$(LLAMA_SERVER_BIN): | $(PY)
	@set -euo pipefail; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; start=$$(date +%s); \
	echo "building llama-server from llama-cpp-python==$(LLAMA_CPP_PYTHON) (a few minutes)"; \
	$(PY) -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$(LLAMA_CPP_PYTHON)" -d "$$tmp"; \
	tar -xzf "$$tmp"/llama_cpp_python-*.tar.gz -C "$$tmp"; \
	src=$$(echo "$$tmp"/llama_cpp_python-*/vendor/llama.cpp); \
	cmake -S "$$src" -B "$$tmp/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
	  -DCMAKE_C_FLAGS='$(GGML_FLAGS)' -DCMAKE_CXX_FLAGS='$(GGML_FLAGS)' \
	  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON \
	  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >"$$tmp/cmake.log" 2>&1 \
	  || { tail -20 "$$tmp/cmake.log"; exit 1; }; \
	cmake --build "$$tmp/build" --target llama-server -j$(CMAKE_BUILD_PARALLEL_LEVEL) >"$$tmp/build.log" 2>&1 \
	  || { tail -20 "$$tmp/build.log"; exit 1; }; \
	mkdir -p "$(@D)"; install -m 755 "$$tmp/build/bin/llama-server" "$@.tmp"; mv "$@.tmp" "$@"; \
	echo "built $@ in $$(( $$(date +%s) - start )) s"

# One sitting of a study that takes longer than a machine lasts (the reference study v3 by
# default; v2's: STUDY=experiments/reference.toml CARRIED=experiments/reference-v2-stored):
# what earlier machines stored comes in from CARRIED (`--merge`), the study runs for at
# most MINUTES (then SIGTERM: trials under way finish or are dropped, nothing stored is lost;
# `make study-stop` sends it sooner),
# and everything stored goes back out to CARRIED (`--export`), to be committed. One model job at
# a time: it takes the lock other model jobs here take. e.g. make study-sitting MINUTES=120
STUDY ?= experiments/reference-v3.toml
CARRIED ?= experiments/reference-v3-stored
STUDY_MODELS ?= qwen2.5-coder-1.5b qwen2.5-coder-0.5b smollm2-135m gemma3-270m
MINUTES ?= 120
study-sitting: install sandbox-deps
	@for m in $(STUDY_MODELS); do $(SLMBENCH) pull $$m >/dev/null || exit 1; done
	$(SLMBENCH) data prepare >/dev/null
	[ ! -d $(CARRIED) ] || $(SLMBENCH) study $(STUDY) --merge $(CARRIED)
	flock /tmp/slmbench-model.lock timeout -s TERM $(MINUTES)m nice -n 10 \
	  $(SLMBENCH) study $(STUDY) || { s=$$?; [ $$s -eq 124 ] || [ $$s -eq 143 ]; }
	$(SLMBENCH) study $(STUDY) --export $(CARRIED)
	$(SLMBENCH) study $(STUDY) --plan

# Ends a running study-sitting early (e.g. before CI) as its timeout would: SIGTERM to the
# sitting's `timeout`, which passes it on; the sitting then exports and prints the plan.
study-stop:
	pkill -TERM -f '^timeout -s TERM [0-9]+m nice -n 10 $(SLMBENCH) study $(STUDY)$$' \
	  || echo "no study-sitting of $(STUDY) is running"

lint: install
	$(PY) -m ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build .pytest_cache
