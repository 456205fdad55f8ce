# Thin aliases of documented commands; see README.md.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export NBVSLR_DATA_MIRROR ?= $(abspath ../shared/data/uci)

.PHONY: install test lint run figures reference guard bench bench-quick clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check nbvslr tests benchmarks

run: $(STAMP)
	$(BIN)/nbvslr run configs/adult.yaml

figures: $(STAMP)
	$(BIN)/nbvslr run configs/figure1.yaml --out results
	$(BIN)/nbvslr plot results --figure1 -o results/figure1.png
	$(BIN)/nbvslr plot results --figure1 -o results/figure1.pdf
	$(BIN)/nbvslr report results -o results/report.md

# The committed reference of tests/test_curves.py: every curve at 1000 splits (then commit results/).
reference: $(STAMP)
	$(BIN)/nbvslr run configs/figure1.yaml configs/synthetic.yaml --splits 1000 --out results --force --jobs -1

# Rerun every curve with few splits and compare it with the reference; prints what moved.
guard: $(STAMP)
	$(BIN)/python -m pytest tests/test_curves.py -m curves -s -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

bench-quick: $(STAMP)
	$(BIN)/python benchmarks/bench.py --quick

clean:
	rm -rf $(VENV) .pytest_cache
