# expect: error
# technique: pytest.skip at module level
import pytest

pytest.skip("nothing to see here", allow_module_level=True)
