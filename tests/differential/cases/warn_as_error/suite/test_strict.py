import warnings

import pytest
from solution import clip


def test_a_warning_turned_into_an_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            clip(99, 0, 10)
