"""The compiled loops (numba), together: ``jit`` (the settings every loop is compiled with),
``draws`` (the training-set draws), ``hmc`` (the exact-HMC bounces), ``steps`` (the pass
that counts mistakes), ``sparse_gram`` (LR's one-hot Newton products) and ``cholesky`` (LR's
Newton systems).

This package imports nothing itself; each module imports numba when it is imported, so a
caller imports a kernel only where it runs (a process that never needs them, like the
calling process of a parallel run, never imports numba).
"""
