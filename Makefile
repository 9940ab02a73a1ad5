# The README's two commands: `make demo` and `make test`. Both work on a fresh machine.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
SLMBENCH := $(VENV)/bin/slmbench
# llama-cpp-python compiles from source; these flags halve the cold build (~3.5 min on 2 cores).
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF
DEMO_MODEL ?= qwen2.5-coder-0.5b
TEST_MODELS ?= smollm2-135m qwen2.5-coder-0.5b

.PHONY: demo test install build-deps system-deps sandbox-deps models lint clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Installs the package with the embedded (llama.cpp) and hf (transformers, CPU torch from local disk) backends and the test tools.
# confseq (anytime-valid confidence sequences, Part B) ships source only: its isolated build
# fails on Python 3.11 (its build pins a pybind11 too old for 3.11), so it is built against a
# current pybind11 without isolation, with Boost headers from build-deps (libboost-dev).
install: $(PY) build-deps
	$(PY) -m pip install -q scikit-build cmake ninja 'pybind11>=2.11'
	$(PY) -m pip install -q --no-build-isolation confseq==0.0.11
	$(PY) -m pip install -q -e '.[embedded,hf,test]'

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

demo: install sandbox-deps
	$(SLMBENCH) pull $(DEMO_MODEL)
	$(SLMBENCH) demo --model llamacpp:$(DEMO_MODEL)

test: install system-deps models
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m pytest

lint: install
	$(PY) -m ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build .pytest_cache
