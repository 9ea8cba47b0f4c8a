"""Codes of an Arrow column's values: pyarrow's dictionary encoding, so each distinct text is looked up once
(by the release codec, the estimation's reader of a release and the GUI's column counts) rather than per row."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa


def dictionary_codes(column) -> tuple[np.ndarray, pa.Array]:
    """(index of each row's value in ``distinct``, -1 where the cell is missing; ``distinct``, the distinct values
    as an Arrow array in order of first occurrence) of an Arrow array or chunked array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], type=column.type)
    encoded = pc.dictionary_encode(column)
    return pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False), encoded.dictionary
