"""Studies built on the runner: experiments that ask one question of many runs.

``sample_complexity``: how many examples NB and LR need, as the number of features grows.
"""
