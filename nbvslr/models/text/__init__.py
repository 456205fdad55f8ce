"""The models of text tasks: the ``nb`` and ``lr`` entries on word counts (``entry``) and their
fits (``fit``)."""
