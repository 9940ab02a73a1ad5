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

.PHONY: demo test install system-deps models lint clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Installs the package with the embedded (llama.cpp) and hf (transformers, CPU torch from local disk) backends and the test tools.
# confseq (anytime-valid confidence sequences, Part B) ships source only: its isolated build
# fails on Python 3.11 (its build pins a pybind11 too old for 3.11), so it is built against a
# current pybind11 without isolation, with Boost headers from system-deps (libboost-dev).
install: $(PY) system-deps
	$(PY) -m pip install -q scikit-build cmake ninja 'pybind11>=2.11'
	$(PY) -m pip install -q --no-build-isolation confseq==0.0.11
	$(PY) -m pip install -q -e '.[embedded,hf,test]'

# System packages the tests need: bubblewrap (the code sandbox), chromium (the HTML report test)
# and libboost-dev (the headers confseq builds against).
system-deps:
	@need=""; \
	command -v bwrap >/dev/null || need="$$need bubblewrap"; \
	[ -f /usr/include/boost/version.hpp ] || need="$$need libboost-dev"; \
	command -v chromium >/dev/null || need="$$need chromium"; \
	if [ -n "$$need" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $$need; \
	  else echo "missing system packages:$$need (run: sudo apt-get install -y$$need)"; exit 1; fi; \
	fi

models: install
	@for m in $(TEST_MODELS); do $(SLMBENCH) pull $$m || exit 1; done

demo: install
	$(SLMBENCH) pull $(DEMO_MODEL)
	$(SLMBENCH) demo --model llamacpp:$(DEMO_MODEL)

test: install system-deps models
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m pytest

lint: install
	$(PY) -m ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build .pytest_cache
