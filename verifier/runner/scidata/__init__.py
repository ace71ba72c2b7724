"""numpy and pandas values as data across the process boundary (the wire codec's second half).

A suite that declares numpy or pandas (`requirements` in suite.toml) has them on both sides of
the candidate boundary, and their common data types cross as **values**, like a list:

- `NA` `numpy.ndarray` (exact, never a subclass): `[dtype, shape, data, layout]`, the dtype's
  exact text (`'<f8'`, `'<M8[ns]'`, `'<U5'`, `'|O'`), the shape, the C-order bytes in base64
  (for the object dtype, the elements as plain wire values instead), and the layout a test can
  ask about: `[strides, writeable, locked, owndata]` (`locked`: read-only, and numpy refuses to
  make it writeable again).
- `NS` a numpy scalar (`numpy.float64`, `numpy.int32`, `numpy.bool_`, `numpy.datetime64`, ...):
  `[dtype, data]`; a `str_` scalar's data is its text and a `bytes_` scalar's its bytes (their
  trailing NULs are part of the value: a buffer of the dtype's width would drop them).
- `PI` `pandas.Index`, `DatetimeIndex`, `TimedeltaIndex` (numpy dtypes only): `[class, name,
  values, freq]`; `PR` `pandas.RangeIndex`: `[start, stop, step, name]`.
- `PS` `pandas.Series` (a numpy dtype): `[values, index, name, flags, attrs]`.
- `PF` `pandas.DataFrame` (every column a numpy dtype): `[columns, index, [column values...],
  flags, attrs]`.
- Values of pandas' own string dtypes (`str`, pandas 3's default for text, and `string`) cross
  in a Series, column or Index as `[dtype name, storage, object array of str or None]`.
- Within one call's arguments, or its answer, a value met again is `NR` (`[number]`: the
  same object as the value of that number, counted in the order values were met, the request's
  values first) and an array inside the memory of an earlier array is `NV` (`[number, byte
  offset, dtype, shape, strides, writeable, data]`): the receiver rebuilds the same object, or
  a view of its own array at that place, so `result is arg`, `np.shares_memory` and writes
  through a view answer as they would in one process.

The receiver rebuilds each as a real object of **its own** numpy or pandas (never unpickling),
after checking the dtype against a fixed pattern and kinds (`b i u f c m M S U O`: no
structured, subarray or void dtype), the shape (at most `MAX_NDIM` dimensions of at most
`MAX_DIM` each), that the bytes are exactly shape x itemsize and the memory a layout spans at
most `MAX_SPAN_FACTOR` times them (a forged shape or stride cannot make it allocate more than the
frame holds), and that a view lies inside the memory of the array it names. Then it encodes
what it built again and requires the very bytes it received: what does not rebuild exactly is
refused (`NotData`), never a different value. The sender makes the same round trip before it
sends, so a value that would not rebuild exactly (a frequency pandas cannot rebuild, a layout
numpy cannot make) stays a handle in the candidate's process. Elements of an object array,
names, labels and `attrs` must be plain data themselves (no reference to a candidate object:
such a value stays a handle). Any other type of these libraries (a masked array, a matrix, an
extension dtype such as `category` or `Int64`, a MultiIndex, a Timestamp) is not data: it stays
a handle. The libraries are imported only when a value of theirs is met: this package is
standard library only, like the rest of the runner. Its modules: `base` (tags, bounds, errors,
the message's scope), `encoding` and `decoding` (the two sides), `views` (identity and views),
`codec` (`encode` and `decode`, each with its round trip), `carry` (in-place changes).

An argument the call changed comes back in its full wire form; `sync` changes the test's own
object in place to it (contents, shape, dtype, strides, flags, names, `attrs`) and then
requires the two forms to be equal: what could not be carried back raises `NotCarried`, which
the trusted side turns into an abort naming it.
"""

from __future__ import annotations

from .base import (
    KINDS,
    MAX_COLUMNS,
    MAX_DIM,
    MAX_HOLIDAYS,
    MAX_ITEMSIZE,
    MAX_NDIM,
    MAX_SPAN_EXTRA,
    MAX_SPAN_FACTOR,
    STRING_DTYPES,
    TAGS,
    Aliased,
    Codec,
    Decode,
    Encode,
    NotCarried,
    NotData,
    mutable,
    scope,
)
from .carry import form, of_libraries, same, sync
from .codec import decode, encode

__all__ = [
    "KINDS",
    "MAX_COLUMNS",
    "MAX_DIM",
    "MAX_HOLIDAYS",
    "MAX_ITEMSIZE",
    "MAX_NDIM",
    "MAX_SPAN_EXTRA",
    "MAX_SPAN_FACTOR",
    "STRING_DTYPES",
    "TAGS",
    "Aliased",
    "Codec",
    "Decode",
    "Encode",
    "NotCarried",
    "NotData",
    "decode",
    "encode",
    "form",
    "mutable",
    "of_libraries",
    "same",
    "scope",
    "sync",
]
