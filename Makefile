# The developer's tasks. Every target uses the project's own virtual environment (.venv), made by `make venv`.
PY := .venv/bin/python
QUICK := not slow and not browser and not package

.PHONY: venv app quick quick-check test lint format bench ci

venv:            ## the environment of the README's second command
	python3 -m venv .venv && .venv/bin/pip install -q -r requirements-dev.txt

app:             ## the app on the invented corpus, at http://127.0.0.1:8501
	.venv/bin/streamlit run app.py

quick:           ## the quick tier: the developer's loop, on both cores, bytecode kept (assertion rewriting is 12 s)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -m "$(QUICK)" -n 2 --durations=15

quick-check:     ## the quick tier in one process, as CI runs it: lists (and with RETRIEVAL_LAB_CHECK_SLOW=1 fails) slow tests
	$(PY) -m pytest -q -m "$(QUICK)" --durations=15

test:            ## every tier, as CI runs them (browser tests need /usr/bin/chromium)
	$(PY) -m pytest -q --durations=15

lint:            ## ruff's checks and formatting, and the layer contract
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/lint-imports --no-cache

format:          ## format the tree and sort imports
	.venv/bin/ruff check --select I --fix .
	.venv/bin/ruff format .

bench:           ## the speed benchmark, peers measured in the same run (bench/requirements.txt)
	$(PY) bench/speed.py

ci:              ## what CI runs on a clean clone (installs chromium, texlive and PostgreSQL if missing)
	bash .ci/run
