# The book's two commands are `make book` and `make test`; both set up
# everything they need on a new machine.

PYTHON  ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export VITBIAS_PROFILE ?= quick
export PATH := $(abspath $(BIN)):$(PATH)
# The chapters import vitbias from this checkout's code/, whatever is installed.
export PYTHONPATH := $(abspath code)$(if $(PYTHONPATH),:$(PYTHONPATH))
export PYDEVD_DISABLE_FILE_VALIDATION := 1

# The executed-notebook cache keys on cell sources only. This key covers what
# else decides a number (the library code, the pinned environment and the
# profile); when it changes, the cached executions are thrown away.
CACHE_KEY = $(shell $(BIN)/python -m tests.booktools cache-key)

.PHONY: book test reference serve clean env

env: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

book: $(STAMP)
	@mkdir -p _build
	@if [ "$$(cat _build/.cache-key 2>/dev/null)" != "$(CACHE_KEY)" ]; then \
	  echo "code, environment or profile changed: re-executing every chapter"; \
	  rm -rf _build/.jupyter_cache _build/.doctrees _build/html _build/jupyter_execute; \
	fi
	$(BIN)/jupyter-book build . --builder html --warningiserror --keep-going
	@echo "$(CACHE_KEY)" > _build/.cache-key
	@echo "The book ($(VITBIAS_PROFILE) profile) is at $(abspath _build/html/index.html)"

# The tests, and nbval's re-execution of the reference notebooks, run on another
# set of PyTorch CPU kernels than the build (the generic ones, or the native ones
# when the build itself used the generic ones), so every run compares two
# numeric paths and a check that only holds on one CPU fails here first.
OTHER_KERNELS = $(if $(filter default,$(ATEN_CPU_CAPABILITY)),env -u ATEN_CPU_CAPABILITY,env ATEN_CPU_CAPABILITY=default)

test: book
	$(OTHER_KERNELS) $(BIN)/python -m pytest tests --nbval --nbval-sanitize-with tests/nbval-sanitize.cfg \
	  --nbval-cell-timeout 900 -p no:cacheprovider

reference: book
	$(BIN)/python -m tests.booktools reference --profile $(VITBIAS_PROFILE) $(CHAPTERS)

serve: book
	$(BIN)/python -m http.server --directory _build/html --bind 127.0.0.1 8000

clean:
	rm -rf _build
