"""Gaussian discriminant analysis: the ``lda`` and ``qda`` entries (``lda``, ``qda``) and their
fits (``gaussian``)."""
