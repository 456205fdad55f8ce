"""Benchmarks of the batched core against a per-split scikit-learn loop (``make bench``)."""
