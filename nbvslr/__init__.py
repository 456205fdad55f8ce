"""nbvslr: naive Bayes vs logistic regression learning curves (Ng & Jordan, NIPS 2001).

The pipeline, one module (or package) per step:
data -> splits -> models -> runner -> results -> stats -> plots / report -> cli.
"""

__version__ = "0.1.0"
