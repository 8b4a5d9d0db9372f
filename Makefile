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
LABS ?= my-labs

.PHONY: setup spark-archive up demo down status labs labs-reset test test-unit test-integration lint typecheck bench clean

# scripts/install-packages.sh: the venv, uv in it, and uv installs requirements.txt and this
# project (editable) from uv's cache in seconds, from PyPI what the cache does not have.
$(VENV)/.installed: requirements.txt pyproject.toml scripts/install-packages.sh
	bash scripts/install-packages.sh $(PYTHON) $(VENV)
	bash scripts/install-system-deps.sh
	bash scripts/install-java.sh $(VENV)
	touch $@

setup: $(VENV)/.installed

# Spark's classes, parsed once for every later JVM (kafkalite/spark/class_archive.py): a
# SparkSession starts in about half the time. Kept in .venv/kafkalite-spark/.
spark-archive: setup
	$(BIN)/python -m kafkalite.spark.class_archive || echo "Spark class archive not built: Spark starts slower"

up: setup  ## first README command: install everything, start the cluster and JupyterLab on the labs
	@$(BIN)/python -m kafkalite.lab.working_copy labs $(LABS)
	$(BIN)/kafkalite lab --brokers $(BROKERS) --dir $(DIR) --kafka-port $(PORT) --port $(JUPYTER_PORT) --labs $(LABS)
	@$(BIN)/python -m kafkalite.spark.class_archive --background

demo: setup  ## the instructor's presenter (Voilà) on the same cluster; SCENARIO=committed opens at one
	$(BIN)/kafkalite demo $(SCENARIO) --brokers $(BROKERS) --dir $(DIR) --kafka-port $(PORT) --port $(DEMO_PORT)

down:  ## stop JupyterLab, the demo and the cluster
	$(BIN)/kafkalite down --dir $(DIR)

status:
	$(BIN)/kafkalite status --dir $(DIR)

labs: setup  ## rebuild the student notebooks in labs/ from the masters in grader/masters/
	$(BIN)/python -m grader assign

labs-reset: setup  ## the labs as shipped again in my-labs/ (LAB=04: that one); your copies kept aside
	$(BIN)/python -m kafkalite.lab.working_copy labs $(LABS) --reset $(LAB)

test: setup spark-archive  ## second README command: lint, types, layering, and every test suite
	$(BIN)/ruff check kafkalite grader tests bench examples scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/test_suite.py  # slow groups (notebooks, the labs three times in order, Spark, containers, grader) beside the rest

test-unit: setup
	$(BIN)/pytest -m unit

lint: setup
	$(BIN)/ruff check kafkalite grader tests bench examples scripts
	$(BIN)/ruff format --check kafkalite grader tests bench examples scripts

typecheck: setup
	$(BIN)/mypy

bench: setup spark-archive
	$(BIN)/python -m bench.run_all

clean:  ## what setup and the tools wrote: .venv/ (Spark's class archive with it) and caches; not my-labs/
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .test-logs kafkalite.egg-info
