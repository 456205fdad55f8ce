"""The compiled HMC kernel across processes: numba is imported only when the sampler runs,
and a later process loads the kernel from numba's disk cache (in-process tests of the sampler:
tests/unit/test_hmc.py)."""

from __future__ import annotations

import pytest


def test_numba_loads_only_when_the_sampler_runs():
    """Importing the package and its CLI does not import numba (it costs ~0.5 s per process;
    NB-only runs and --help never need it)."""
    import subprocess
    import sys

    code = "import sys, nbvslr.cli, nbvslr.models; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_compiled_kernel_is_reused_by_later_processes(tmp_path):
    """A second process loads the compiled kernel from numba's disk cache (no recompile)."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from nbvslr.models.lr.hmc import sample_separating_hmc\n"
        "from nbvslr.kernels import hmc as hmc_kernel\n"
        "Z1 = np.array([[[2.0, 1.0], [1.0, 1.0]]])\n"
        "sample_separating_hmc(Z1, np.array([[1.0, -1.0]]), np.array([[1.0, -1.5]]),\n"
        "                      [np.random.SeedSequence(0)])\n"
        "s = hmc_kernel.run_chains.stats\n"
        "print(sum(s.cache_hits.values()), sum(s.cache_misses.values()))\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, check=True).stdout.split() for _ in range(2)]
    assert runs == [["0", "1"], ["1", "0"]]
