# The book's two commands are `make book` and `make test`; both set up
# everything they need on a new machine. `make` alone lists every target.

PYTHON  ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export VITBIAS_PROFILE ?= quick
export PATH := $(abspath $(BIN)):$(PATH)
# The chapters import vitbias from this checkout's code/, whatever is installed.
export PYTHONPATH := $(abspath code)$(if $(PYTHONPATH),:$(PYTHONPATH))
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help book test unit lint chapter reference bench serve clean clean-runs env wheel notebooks site-check site-test launched

help:
	@echo "make book              set up .venv (first run only), execute the chapters, build the HTML"
	@echo "make test              build, then every check: unit tests, prose lint, number drift, nbval, browser"
	@echo "make unit              the tests that need no build (vitbias, the tools, the exercises' grader)"
	@echo "make lint              ruff over code/, tests/, exercises/ and tools/, vitbias's imports against"
	@echo "                       the layers of its map (code/vitbias/__init__.py, tools/layers.py), and the"
	@echo "                       workflows in .github/workflows/ (check-jsonschema, zizmor; offline)"
	@echo "make chapter CH=name   execute one chapter afresh and compare its numbers with the reference"
	@echo "make reference         rewrite tests/reference/ after an intended change [CHAPTERS=\"a b\"]"
	@echo "make bench             speed: the trainer against a bare loop, runs side by side, each chapter's"
	@echo "                       execution and training time, locality measures (tools/bench.py)"
	@echo "make serve             serve _build/html on http://127.0.0.1:8000"
	@echo "make notebooks         write notebooks/<chapter>.ipynb, each installing vitbias itself (Colab, Binder)"
	@echo "make wheel             build the vitbias wheel the site publishes under _static/"
	@echo "make site-check        check that no page of _build/html loads anything from another host"
	@echo "make site-test         open every page of _build/html in headless Chromium (installed if missing);"
	@echo "                       fail on a console error, a broken image, raw TeX, an undrawn figure, a figure"
	@echo "                       shown twice or printed wrong, code wider than its column, a broken link"
	@echo "                       or a serious WCAG 2.1 A/AA violation (axe-core)"
	@echo "make launched          the lab and one chapter as a Binder reader launches them: a fresh environment"
	@echo "                       from binder/requirements.txt, an empty run cache, 2 GB; time and peak memory"
	@echo "make clean             remove _build/ (trained runs in .runs/ are kept)"
	@echo "make clean-runs        remove the trained runs in .runs/"

env: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# The executed-notebook cache keys on cell sources only. Before a build,
# tools/booktools.py removes from it the chapters whose vitbias modules (as they
# import them, transitively), exercises, pinned environment or profile changed,
# so that exactly they re-execute; then it trains the runs those chapters will read,
# all in one pool of workers, and executes those chapters side by side into the
# cache, from which the build reads them; after the build, it records what each
# was made from.
book: $(STAMP) wheel
	@mkdir -p _build
	@$(BIN)/python -m tools.booktools invalidate
	@$(BIN)/python -m tools.booktools train
	@$(BIN)/python -m tools.booktools execute
	$(BIN)/jupyter-book build . --builder html --warningiserror --keep-going
	@$(BIN)/python -m tools.booktools record
	@echo "The book ($(VITBIAS_PROFILE) profile) is at $(abspath _build/html/index.html)"

# The tests, and nbval's re-execution of the reference notebooks, run on another
# set of PyTorch CPU kernels than the build (the generic ones, or the native ones
# when the build itself used the generic ones), so every run compares two
# numeric paths and a check that only holds on one CPU fails here first.
OTHER_KERNELS = $(if $(filter default,$(ATEN_CPU_CAPABILITY)),env -u ATEN_CPU_CAPABILITY,env ATEN_CPU_CAPABILITY=default)

# The tests run in TEST_WORKERS processes (pytest-xdist, one per core, at most four), each taking
# whole files, so that a reference notebook's cells run in order in one kernel. Each worker, and
# each notebook kernel it starts, computes on one thread: with a pool of threads per process the
# processes outnumber the cores and wait on each other.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)

test: book
	OMP_NUM_THREADS=1 $(OTHER_KERNELS) $(BIN)/python -m pytest tests exercises --nbval --nbval-sanitize-with tests/nbval-sanitize.cfg \
	  --nbval-cell-timeout 3600 -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile
	@$(MAKE) --no-print-directory site-test

unit: $(STAMP)
	$(OTHER_KERNELS) $(BIN)/python -m pytest tests exercises --ignore=tests/test_book.py --ignore=tests/test_site_offline.py \
	  --ignore=tests/test_citations.py -p no:cacheprovider -q

# ruff, then the layers: a vitbias module imports only from its own layer and those
# below it, as the map in code/vitbias/__init__.py declares them (tools/layers.py); then the
# workflows, offline: against GitHub's workflow schema as check-jsonschema ships it, and zizmor's
# audits (template injection, unpinned actions, credentials left in the checkout, permissions).
# Their linters come from tools/requirements-lint.txt, with a stamp of their own, so that a
# change of those pins neither reinstalls the book's environment nor re-executes a chapter.
LINT_STAMP := $(VENV)/.installed-lint

$(LINT_STAMP): tools/requirements-lint.txt $(STAMP)
	$(BIN)/python -m pip install --quiet -r tools/requirements-lint.txt
	touch $@

lint: $(STAMP) $(LINT_STAMP)
	$(BIN)/ruff check code tests exercises tools
	$(BIN)/python -m tools.layers
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(BIN)/zizmor --offline .github/workflows

chapter: $(STAMP)
	@test -n "$(CH)" || { echo "usage: make chapter CH=bias-toy"; exit 2; }
	$(BIN)/python -m tools.booktools check $(CH)

reference: book
	$(BIN)/python -m tools.booktools reference --profile $(VITBIAS_PROFILE) $(CHAPTERS)

# The vitbias wheel, published by the site under _static/: the launched
# notebooks install it when no repository URL is set (tools/notebooks.py).
wheel: $(STAMP)
	@$(BIN)/python -m tools.notebooks --wheel _build/wheel >/dev/null

# One notebook per chapter for Colab and Binder, whose first cell installs
# vitbias from $$BOOK_REPOSITORY_URL (or the wheel). A publishing step commits
# notebooks/ on the branch the launch buttons name ($$BOOK_BRANCH).
notebooks: $(STAMP)
	$(BIN)/python -m tools.notebooks --out notebooks

site-check:
	$(BIN)/python -m tools.sitecheck _build/html

# The built site in a browser, after `make book`: pytest is the one runner, pytest-playwright's fixtures
# (tools/conftest.py) launch the system's Chromium and open a context for each page, tools/sitetest.py
# judges the page. Playwright and pytest-playwright into .venv (tools/requirements-site.txt, once),
# Chromium from the system's packages (apt-get, when it is missing: `tools.sitetest --install`, before the
# two runs, so that they do not both install it), then the checker's own test on tests/site/ and, side by
# side with it (each is mostly one process), every page of _build/html as a test of its own
# (tools/test_site_pages.py), with a screenshot of each in _build/site-test/; the checker's own report is
# printed after the pages'. It fails if either fails. `make test` ends with it.
SITE_STAMP := $(VENV)/.installed-site-test

$(SITE_STAMP): tools/requirements-site.txt $(STAMP)
	$(BIN)/python -m pip install --quiet -r tools/requirements-site.txt
	touch $@

site-test: $(SITE_STAMP)
	$(BIN)/python -m tools.sitetest --install
	@mkdir -p _build
	@$(BIN)/python -m pytest tools/test_sitetest.py -p no:cacheprovider -q > _build/site-selftest.log 2>&1 & \
	BOOK_SITE_HTML=$(abspath _build/html) $(BIN)/python -m pytest tools/test_site_pages.py -p no:cacheprovider -q; \
	pages=$$?; wait $$!; own=$$?; echo "the checker's own test (tools/test_sitetest.py):"; \
	cat _build/site-selftest.log; [ $$pages -eq 0 ] && [ $$own -eq 0 ]

bench: $(STAMP)
	$(BIN)/python -m tools.bench

# The lab notebook and one chapter's, launched as a reader launches them on Binder: a fresh
# environment with only binder/requirements.txt, their own install cell, an empty run cache and a
# 2 GB session (tools/launched.py). Too long for make test (about 15 minutes on two cores): weekly.
launched: $(STAMP)
	$(BIN)/python -m tools.launched

serve: book
	$(BIN)/python -m http.server --directory _build/html --bind 127.0.0.1 8000

clean:
	rm -rf _build

clean-runs:
	rm -rf .runs
