"""Settings of the model options that are not one option: the profiles, each sampler's
default counts, and the bounds of the counts.

Each model name's options (default, valid values, meaning) are declared once, in its table
(``nb.fit.NB_OPTIONS``, ``lr.entry.LR_OPTIONS``); ``registry.resolve_options`` validates a
config's options against it once per model, when the config is read, and the fitting code
then receives a plain dict that holds every option of its family.
"""

from __future__ import annotations

from typing import Any

#: Named profiles: ``profile: NAME`` in a config changes these defaults for every model of
#: the family, on every task (options the config sets explicitly still win).
#: ``stated`` is the method as the paper states it; ``as-published`` the one setting for
#: all panels that comes closest to the published curves (docs/fidelity.md).
DEFAULT_PROFILE = "stated"
PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "stated": {"nb": {}, "lr": {}},
    "as-published": {
        "nb": {
            "prior": "uniform-gaussian",
            "epsilon_form": "absolute",
            "var_smoothing": 0.01,
            "ties": "positive",
        },
        # Newton's iterate on quasi-separated sets: what makes adult (discrete)'s LR curve
        # rise and fall at m = 22-102 as the paper's does (docs/fidelity.md)
        "lr": {"coding": "full", "quasi": "newton"},
    },
}


#: Each sampler's defaults of the ``mcmc_*`` counts (nbvslr.models.lr.hmc and
#: nbvslr.models.lr.hit_and_run say why).
MCMC_DEFAULTS = {
    "hmc": {"mcmc_chains": 1, "mcmc_draws": 2, "mcmc_burn_in": 5, "mcmc_thin": 1},
    "hit-and-run": {"mcmc_chains": 2, "mcmc_draws": 1, "mcmc_burn_in": 150, "mcmc_thin": 50},
}


#: Upper bounds of the counts: each is far above any useful value, and keeps a typo (an extra
#: zero or three) from running for days or filling the memory. A split keeps
#: ``mcmc_chains * mcmc_draws`` hyperplanes of P numbers each (MAX_HYPERPLANES bounds that).
MAX_ITER = 10_000
MAX_CHAINS = 1_000
MAX_DRAWS = 10_000
MAX_HYPERPLANES = 10_000
MAX_BURN_IN = 1_000_000
MAX_THIN = 10_000
MAX_MCMC_ITERATIONS = 1_000_000  # burn_in + draws * thin, per chain
