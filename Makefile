# newscrawl: the commands of the README, each setting itself up on a fresh machine.
#   make crawl START_URLS=https://www.heise.de/[,URL...]   [DEPTH=2] [STRATEGY=bfs] [REPLAY=1]
#                    DEPTH / STRATEGY become -a depth / -a strategy only when given, so
#                    ARGS="-s NEWSCRAWL_DEPTH=1" works too; precedence: -a argument >
#                    -s setting > newscrawl/settings.py > newscrawl/defaults.py. REPLAY_PORT
#                    (default: a free port) is taken as given and must be free.
#   make test        the tests in TEST_WORKERS parallel processes (default 2, pytest-xdist, one
#                    test file per process at a time); TEST_WORKERS=0 runs them in this process
#   make bench       every benchmark at its quick size, each target met / NOT met
#                    (BENCH_ARGS="--only recrawl,revisit_sim" or "--full"; live_freshness runs its
#                    matrix: 3 live site shapes x 4 min side by side, docs/benchmarks.md)
#   make demo        3 loopback news sites (tests/livesite.py) watched for DEMO_SECONDS (default 60)
#                    into NEWSCRAWL_DATA_DIR (default ./data-demo), then the report (bin/demo)
#   make typecheck   mypy over the production packages (strict for newscrawl/algorithms; mypy.ini)
#   make docs        the documentation site (mkdocs.yml, docs/) into site/, warnings as errors,
#                    after checking that the generated pages are current (bin/gendocs --check;
#                    bin/gendocs rewrites them); never with -q: mkdocs then counts no warning
PYTHON ?= python3.11
VENV := .venv
REPLAY_VENV := .venv-replay
SHARED ?= ../shared
TEST_WORKERS ?= 2
DEMO_SECONDS ?= 60
DEMO_DATA_DIR := $(or $(NEWSCRAWL_DATA_DIR),$(CURDIR)/data-demo)
export NEWSCRAWL_DATA_DIR ?= $(CURDIR)/data

.PHONY: crawl demo test bench typecheck docs setup setup-replay clean

$(VENV)/.installed: requirements.txt requirements-test.txt requirements-docs.txt setup.py
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (set PYTHON=python3)"; exit 1; }
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -r requirements-test.txt
	$(VENV)/bin/python -m pip install --quiet --no-deps -e .  # the `newscrawl` command, from any directory
	touch $@

$(REPLAY_VENV)/.installed: requirements-replay.txt
	test -x $(REPLAY_VENV)/bin/python || $(PYTHON) -m venv $(REPLAY_VENV)
	$(REPLAY_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(REPLAY_VENV)/bin/python -m pip install --quiet -r requirements-replay.txt
	touch $@

setup: $(VENV)/.installed
setup-replay: $(REPLAY_VENV)/.installed

crawl: $(VENV)/.installed $(if $(REPLAY),$(REPLAY_VENV)/.installed)
	@test -n "$(START_URLS)$(SEEDS)" || { echo "usage: make crawl START_URLS=https://www.heise.de/[,URL...] (or SEEDS=file)"; exit 2; }
	@VENV=$(VENV) REPLAY_VENV=$(REPLAY_VENV) SHARED=$(SHARED) REPLAY_PORT=$(REPLAY_PORT) \
	  REPLAY=$(REPLAY) bin/crawl $(if $(START_URLS),-a start_urls=$(START_URLS)) \
	  $(if $(SEEDS),-a seeds=$(SEEDS)) $(if $(DEPTH),-a depth=$(DEPTH)) \
	  $(if $(STRATEGY),-a strategy=$(STRATEGY)) $(ARGS)

demo: $(VENV)/.installed
	VENV=$(VENV) $(VENV)/bin/python bin/demo --seconds $(DEMO_SECONDS) --data-dir $(DEMO_DATA_DIR)

test: $(VENV)/.installed $(REPLAY_VENV)/.installed
	$(VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

bench: $(VENV)/.installed
	$(VENV)/bin/python benchmarks/bench.py $(BENCH_ARGS)

typecheck: $(VENV)/.installed
	$(VENV)/bin/python -m mypy newscrawl extensions spiders middlewares pipelines

docs: $(VENV)/.installed
	$(VENV)/bin/python bin/gendocs --check
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) $(REPLAY_VENV) .pytest_cache site
