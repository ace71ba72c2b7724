"""Sets of integers kept as sorted, inclusive ranges."""

from rangeset.core import Range, contains, normalize, parse, to_text, total

__all__ = ["Range", "contains", "normalize", "parse", "to_text", "total"]
__version__ = "0.1.0"
