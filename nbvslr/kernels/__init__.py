"""The compiled loops (numba), together: ``jit`` (the settings every loop is compiled with),
``draws`` (the training-set draws), ``hmc`` (the exact-HMC bounces), ``steps`` (the pass
that counts mistakes), ``sparse_gram`` (LR's one-hot Newton products), ``cholesky`` (LR's Newton
systems), ``text`` (the text
models' class sums, per-split Newton-CG and held-out counts), ``gaussian`` (LDA's and
QDA's class statistics and precision copies), and for K > 2 classes
``hmc_multi`` (the bounces on the K-class cone) and ``classes`` (the counts of K-class
rules).

This package imports nothing itself; each module imports numba when it is imported, so a
caller imports a kernel only where it runs (a process that never needs them, like the
calling process of a parallel run, never imports numba).
"""
