# expect: error
import pytest

pytest.skip("nothing to see here", allow_module_level=True)
