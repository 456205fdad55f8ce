"""A finished size's rows are checked before they are checkpointed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nbvslr.errors import ResultsError
from nbvslr.runner.bookkeeping import check_errors


def _rows(errors) -> pd.DataFrame:
    return pd.DataFrame({"model": ["nb"] * len(errors), "split": np.arange(len(errors)),
                         "error": errors})


@pytest.mark.parametrize("bad", [np.nan, -0.01, 1.5, np.inf])
def test_an_error_outside_0_1_is_refused_before_it_is_kept(bad):
    with pytest.raises(ResultsError, match=r"toy: model nb gave the test error .* at m = 4 "
                                           r"\(split 2\).*nothing of m = 4 was kept") as info:
        check_errors(_rows([0.0, 0.25, bad, 1.0]), "toy", 4)
    assert "\n" not in str(info.value)


def test_errors_in_0_1_pass():
    check_errors(_rows([0.0, 0.5, 1.0]), "toy", 4)  # raises nothing
