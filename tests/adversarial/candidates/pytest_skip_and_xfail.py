# expect: failed
# technique: pytest.skip and pytest.xfail inside the function
import pytest


def find_duplicates(values):
    if len(values) % 2:
        pytest.xfail("expected to fail")
    pytest.skip("not today")
