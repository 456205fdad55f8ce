# Thin aliases of documented commands; see README.md.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
RESULTS ?= results
# The sample-complexity study of `make sample-complexity`: a folder git ignores.
STUDY_OUT ?= $(RESULTS)/studies/sample-complexity

# The 15 panels of Figure 1, in the paper's order.
PANELS  := pima adult-continuous boston optdigits-0v1 optdigits-2v3 ionosphere liver sonar \
           adult-discrete promoters lymphography breast-cancer lenses sick voting

.PHONY: install test test-fast lint docs run figures draw reference refresh-reference \
        redraw-committed compare bench bench-quick sample-complexity refresh-sample-complexity \
        refresh-multiclass refresh-text refresh-as-published refresh-generative efron \
        refresh-efron refresh-metrics refresh-long \
        seal-committed \
        clean

# The install ends by compiling the numba loops once for this machine, which a first run
# would otherwise pay; its line says how long (nbvslr/runner/warm.py's ESTIMATE_S, the one
# source of that number; benchmarks/RESULTS.md).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dask]'
	$(BIN)/python -c 'from nbvslr.runner.warm import main; main()'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q

# The unit tests alone (tests/unit: one module at a time, under a minute; the few marked
# slow are left to make test): the loop while working.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q tests/unit -m 'not slow'

lint: $(STAMP)
	$(BIN)/ruff check nbvslr tests benchmarks studies docs

# docs/options.md from the code that defines every default (tests/unit/test_docs.py checks it).
docs: $(STAMP)
	$(BIN)/python docs/options_page.py > docs/options.md

run: $(STAMP)
	$(BIN)/nbvslr run configs/adult.yaml

# Figure 1 at the paper's 1000 splits into results/ (resuming finished sizes), then drawn.
# git ignores what it writes there; the committed reference is results/reference/.
figures: $(STAMP)
	$(BIN)/nbvslr run configs/figure1.yaml --out $(RESULTS)
	$(MAKE) draw RESULTS=$(RESULTS)

# Draw the figure and the report from saved results only (never re-runs anything):
# `make draw` for results/. It prints where the files went and one line per panel (the
# winner at each end, the crossover); the whole table is in report.md. The committed runs keep no splits.csv.gz (the report's
# crossover intervals need them): `make redraw-committed` redraws their figures alone.
draw: $(STAMP)
	$(BIN)/nbvslr plot $(addprefix $(RESULTS)/,$(PANELS)) --figure1 \
	    -o $(RESULTS)/figure1.png -o $(RESULTS)/figure1.pdf
	test ! -d $(RESULTS)/nb-data || \
	    $(BIN)/nbvslr plot $(RESULTS)/nb-data $(RESULTS)/dependent -o $(RESULTS)/synthetic.png
	$(BIN)/nbvslr report $(RESULTS) -o $(RESULTS)/report.md --brief

# Refreshing a committed run (the targets named refresh-*) rewrites committed files under
# results/: review `git diff results/...` and commit it with the change that moved it.
# Every other target writes where git ignores.

# The committed reference of tests/system/test_curves.py: every curve recomputed at 1000
# splits, then drawn, with its report.
refresh-reference: $(STAMP)
	$(BIN)/nbvslr run configs/figure1.yaml configs/synthetic.yaml --splits 1000 \
	    --out results/reference --force
	$(MAKE) draw RESULTS=results/reference
	$(MAKE) seal-committed

# The committed K-class and text runs (docs/multiclass.md, docs/text.md), at 1000 splits,
# with their figure and report.
refresh-multiclass: $(STAMP)
	$(BIN)/nbvslr run configs/multiclass.yaml --out results/multiclass --force
	$(BIN)/nbvslr plot results/multiclass \
	    -o results/multiclass/figure.png -o results/multiclass/figure.pdf
	$(BIN)/nbvslr report results/multiclass -o results/multiclass/report.md
	$(MAKE) seal-committed

# Figure 1 under profile as-published (docs/fidelity.md), at 1000 splits, with its report
# and fidelity table.
refresh-as-published: $(STAMP)
	$(BIN)/nbvslr run configs/as-published.yaml --out results/as-published --force
	$(BIN)/nbvslr report results/as-published -o results/as-published/report.md
	$(BIN)/nbvslr fidelity results/as-published -o results/as-published/fidelity.md
	$(MAKE) seal-committed

# The curves measured past the paper's grids (configs/long/, 200 splits a size, every size
# past the paper's largest m) that docs/extrapolation.md checks the extrapolation against:
# the committed results/long and its report. One worker, 45-90 s of CPU (2-3 min wall on a
# loaded machine); make figures does not run it.
refresh-long: $(STAMP)
	$(BIN)/nbvslr run $(sort $(wildcard configs/long/*.yaml)) --out results/long --force \
	    --jobs 1
	$(BIN)/nbvslr report results/long -o results/long/report.md --no-paper
	$(MAKE) seal-committed

# NB, LDA and QDA against LR on four panels (docs/discriminant.md, docs/findings.md), at 1000
# splits, with its figure and report.
refresh-generative: $(STAMP)
	$(BIN)/nbvslr run configs/generative.yaml --out results/generative --force
	$(BIN)/nbvslr plot results/generative \
	    -o results/generative/figure.png -o results/generative/figure.pdf
	$(BIN)/nbvslr report results/generative -o results/generative/report.md
	$(MAKE) seal-committed

refresh-text: $(STAMP)
	$(BIN)/nbvslr run configs/sms-spam.yaml --out results/text --force
	$(BIN)/nbvslr report results/text -o results/text/report.md
	$(MAKE) seal-committed

# Four panels of Figure 1 with every metric (configs/metrics.yaml; docs/findings.md,
# "Beyond the 0-1 error"), at 1000 splits: the run, then each metric's figure, report
# (Markdown and CSV) and summary (summary-<metric>.csv: Results.metric(m).summary, the
# columns of summary.csv), made while its splits.csv.gz is there (a metric's tables are computed
# from the splits, which are not committed). Its task folders keep their files.sha256.
METRIC_NAMES = error log_loss brier train_error
refresh-metrics: $(STAMP)
	$(BIN)/nbvslr run configs/metrics.yaml --out results/metrics --force
	for m in $(METRIC_NAMES); do \
	    $(BIN)/nbvslr plot results/metrics --metric $$m -o results/metrics/$$m.png && \
	    $(BIN)/nbvslr report results/metrics --metric $$m --no-paper \
	        -o results/metrics/report-$$m.md > /dev/null && \
	    $(BIN)/nbvslr report results/metrics --metric $$m --format csv \
	        -o results/metrics/report-$$m.csv > /dev/null || exit 1; \
	done
	$(BIN)/python -c "import nbvslr; r = nbvslr.load('results/metrics'); \
	    [r.metric(m).summary.to_csv(f'results/metrics/summary-{m}.csv', index=False, \
	     float_format='%.10g', lineterminator='\n') for m in '$(METRIC_NAMES)'.split()]"

# After a refresh: the committed runs keep their tables, not their splits.csv.gz (git
# ignores it); each task folder's files.sha256 is written again over its tables alone
# (summary.csv, paired.csv, run.json: the readers check them, a fresh clone verifies), the
# figures are drawn again from the tables alone, as a fresh clone draws them, and the
# per-size costs of the time-left estimate are taken again from the runs' timings
# (nbvslr/runner/costs.csv).
seal-committed: $(STAMP)
	$(BIN)/python docs/committed_figures.py --seal
	$(BIN)/python -c 'from nbvslr.runner.costs import main; main()' > nbvslr/runner/costs.csv

reference:
	@echo "make reference is now 'make refresh-reference' (it rewrites the committed" \
	      "results/reference); 'make figures' runs Figure 1 into $(RESULTS)/, which git ignores" >&2
	@false

# The committed figures (results/reference, results/as-published, results/multiclass,
# results/text, results/generative) drawn again from their
# committed tables by the current code, after a change to the drawing; nothing is run
# (tests/system/test_committed_figures.py checks that they match the code).
redraw-committed: $(STAMP)
	$(BIN)/python docs/committed_figures.py

# The curve guard: rerun every curve with few splits and compare it with the reference
# (nbvslr compare's rules); prints what moved.
compare: $(STAMP)
	$(BIN)/python -m pytest tests/system/test_curves.py -m curves -s -q

# m* of NB and LR as the number of features grows (docs/sample-complexity.md), into
# $(STUDY_OUT) (git ignores it); resumes finished sizes: add ARGS=--force to recompute
# everything. refresh-sample-complexity rewrites the committed results/sample-complexity.
sample-complexity: $(STAMP)
	$(BIN)/nbvslr sample-complexity studies/sample-complexity.yaml --out $(STUDY_OUT) $(ARGS)

refresh-sample-complexity: $(STAMP)
	$(BIN)/nbvslr sample-complexity studies/sample-complexity.yaml \
	    --out results/sample-complexity $(ARGS)

# Efron's comparison measured (docs/efron.md): LDA against LR on two Gaussian classes with a
# shared covariance, four separations, m = 10 .. 640, 2000 training sets each, against the
# asymptotic relative efficiency; into $(RESULTS)/studies/efron (git ignores it).
# refresh-efron rewrites the committed results/efron.
efron: $(STAMP)
	$(BIN)/python studies/efron/efron.py --out $(RESULTS)/studies/efron $(ARGS)

refresh-efron: $(STAMP)
	$(BIN)/python studies/efron/efron.py --out results/efron $(ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

bench-quick: $(STAMP)
	$(BIN)/python benchmarks/bench.py --quick

clean:
	rm -rf $(VENV) .pytest_cache
