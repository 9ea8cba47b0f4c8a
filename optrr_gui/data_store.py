"""Qt-free storage of the rows shown in the data view, filled chunk by chunk from a background reader.

Each chunk column is factorised (integer codes + its distinct values), so a million rows of categorical
data take a few bytes per cell and any cell is found in O(log chunks) without building strings for rows
nobody looks at. Cells are formatted only when the view asks for them.
"""

from __future__ import annotations

import bisect
import math
import threading

import numpy as np


class _Chunk:
    __slots__ = ("start", "rows", "codes", "uniques")

    def __init__(self, start: int, frame, columns: list[str]):
        import pandas as pd

        self.start = start
        self.rows = len(frame)
        self.codes = []
        self.uniques = []
        for name in columns:
            if name in frame.columns:
                codes, uniques = pd.factorize(frame[name], use_na_sentinel=True)
            else:
                codes, uniques = np.full(self.rows, -1, dtype=np.int64), np.asarray([])
            small = np.int32 if len(uniques) > 32_000 else np.int16
            self.codes.append(codes.astype(small, copy=False))
            self.uniques.append(np.asarray(uniques, dtype=object))


def format_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.10g}"
    return str(value)


class DataStore:
    """Rows read so far; appended from a worker thread, read from the UI thread."""

    def __init__(self, columns: list[str]):
        self.columns = [str(c) for c in columns]
        self._chunks: list[_Chunk] = []
        self._starts: list[int] = []
        self._rows = 0
        self._lock = threading.Lock()
        self.complete = False

    @property
    def rows(self) -> int:
        return self._rows

    def append(self, frame) -> int:
        """Add a chunk (a DataFrame); returns the number of rows now stored."""
        chunk = _Chunk(self._rows, frame, self.columns)
        with self._lock:
            self._chunks.append(chunk)
            self._starts.append(chunk.start)
            self._rows += chunk.rows
            return self._rows

    def cell(self, row: int, column: int) -> str:
        i = bisect.bisect_right(self._starts, row) - 1
        if i < 0:
            return ""
        chunk = self._chunks[i]
        code = int(chunk.codes[column][row - chunk.start])
        return "" if code < 0 else format_cell(chunk.uniques[column][code])


def load_rows(path, options, store: DataStore, progress=None, cancel=None) -> int:
    """Read the whole file chunk by chunk into ``store`` (worker thread). Returns the number of rows.
    The data view polls ``store.rows`` and shows rows as they arrive."""
    from optrr_engine.tasks import TaskControl

    from .engine_api import readers

    iter_chunks = readers().iter_chunks
    ctl = TaskControl(progress, cancel)
    rows = 0
    for frame in iter_chunks(path, options, columns=None):
        ctl.check()
        rows = store.append(frame)
        ctl.report(0.0, f"{rows:,} rows read")
    store.complete = True
    ctl.report(1.0, f"{rows:,} rows")
    return rows
