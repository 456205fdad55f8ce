# Thin aliases of documented commands; see README.md.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export NBVSLR_DATA_MIRROR ?= $(abspath ../shared/data/uci)

# The 15 panels of Figure 1, in the paper's order.
PANELS  := pima adult-continuous boston optdigits-0v1 optdigits-2v3 ionosphere liver sonar \
           adult-discrete promoters lymphography breast-cancer lenses sick voting

.PHONY: install test lint run figures draw reference guard bench bench-quick clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dask]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check nbvslr tests benchmarks

run: $(STAMP)
	$(BIN)/nbvslr run configs/adult.yaml

# Figure 1 at the paper's 1000 splits: run (resuming finished sizes), then draw and report.
figures: $(STAMP)
	$(BIN)/nbvslr run configs/figure1.yaml --out results
	$(MAKE) draw

# Draw the figure and the report from the saved results only (never re-runs anything).
draw: $(STAMP)
	$(BIN)/nbvslr plot $(addprefix results/,$(PANELS)) --figure1 \
	    -o results/figure1.png -o results/figure1.pdf
	$(BIN)/nbvslr plot results/nb-data results/dependent -o results/synthetic.png
	$(BIN)/nbvslr report results -o results/report.md

# The committed reference of tests/test_curves.py: every curve recomputed at 1000 splits,
# then drawn; review `git diff results/` and commit it with the change that moved it.
reference: $(STAMP)
	$(BIN)/nbvslr run configs/figure1.yaml configs/synthetic.yaml --splits 1000 --out results --force
	$(MAKE) draw

# Rerun every curve with few splits and compare it with the reference; prints what moved.
guard: $(STAMP)
	$(BIN)/python -m pytest tests/test_curves.py -m curves -s -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

bench-quick: $(STAMP)
	$(BIN)/python benchmarks/bench.py --quick

clean:
	rm -rf $(VENV) .pytest_cache
