# The README's commands are these targets. Everything installs into .venv/ at the repo root.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DIR ?= .kafkalite
BROKERS ?= 3
PORT ?= 9092
JUPYTER_PORT ?= 8888
DEMO_PORT ?= 8866
SCENARIO ?=

.PHONY: setup up demo down status labs test test-unit test-integration lint typecheck bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	bash scripts/install-system-deps.sh
	bash scripts/install-java.sh $(VENV)
	$(BIN)/python -m kafkalite.spark.class_archive || echo "Spark class archive not built: Spark starts slower"
	touch $@

setup: $(VENV)/.installed

up: setup  ## first README command: install everything, start the cluster and JupyterLab on labs/
	$(BIN)/kafkalite lab --brokers $(BROKERS) --dir $(DIR) --kafka-port $(PORT) --port $(JUPYTER_PORT)

demo: setup  ## the instructor's presenter (Voilà) on the same cluster; SCENARIO=committed opens at one
	$(BIN)/kafkalite demo $(SCENARIO) --brokers $(BROKERS) --dir $(DIR) --kafka-port $(PORT) --port $(DEMO_PORT)

down:  ## stop JupyterLab, the demo and the cluster
	$(BIN)/kafkalite down --dir $(DIR)

status:
	$(BIN)/kafkalite status --dir $(DIR)

labs: setup  ## rebuild the student notebooks in labs/ from the masters in grader/masters/
	$(BIN)/python -m grader assign

test: setup  ## second README command: lint, types, layering, and every test suite
	$(BIN)/ruff check kafkalite grader tests bench examples scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/test_suite.py  # slow groups (notebooks, Spark, containers, grader) beside the rest

test-unit: setup
	$(BIN)/pytest -m unit

lint: setup
	$(BIN)/ruff check kafkalite grader tests bench examples scripts
	$(BIN)/ruff format --check kafkalite grader tests bench examples scripts

typecheck: setup
	$(BIN)/mypy

bench: setup
	$(BIN)/python -m bench.run_all

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
