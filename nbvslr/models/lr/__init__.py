"""Logistic regression: the ``lr`` entry (``entry``), its fits (``newton``, ``softmax``), the
separation of a training set (``separation``) and the separable-set samplers (``hmc``,
``cone_hmc``, ``hit_and_run``, ``sum_zero``)."""
