import warnings

from solution import clip


def test_one_warning_per_clip(recwarn):
    clip(-5, 0, 10)
    clip(5, 0, 10)
    clip(50, 0, 10)
    assert len(recwarn) == 2
    assert all(issubclass(w.category, UserWarning) for w in recwarn)


def test_no_warning_in_range():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clip(5, 0, 10) == 5
