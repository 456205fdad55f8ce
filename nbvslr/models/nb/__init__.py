"""Naive Bayes: the ``nb`` entries (``entry``) and their fits, two classes (``fit``) and K
classes (``fit_multi``)."""
