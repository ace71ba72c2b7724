# expect: error
# technique: sys.exit(0) at import
import sys

sys.exit(0)
