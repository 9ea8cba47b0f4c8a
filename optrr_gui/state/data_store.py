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


class EncodedChunk:
    """One chunk of rows: per column, integer codes (-1 = missing) and the distinct values they index;
    ``names``: the columns the file itself has (None: not known); ``unreadable``: {column: why} of the file's
    columns the reader cannot give as text (not read: their codes are all -1)."""

    __slots__ = ("start", "rows", "codes", "uniques", "names", "unreadable")

    def __init__(
        self,
        rows: int,
        codes: list,
        uniques: list,
        start: int = 0,
        names: list | None = None,
        unreadable: dict | None = None,
    ):
        self.start, self.rows, self.codes, self.uniques, self.names = start, rows, codes, uniques, names
        self.unreadable = dict(unreadable or {})

    def __reduce__(self):  # sent from a worker process to the window
        return (EncodedChunk, (self.rows, self.codes, self.uniques, self.start, self.names, self.unreadable))


def encode_chunk(table, columns: list[str]) -> EncodedChunk:
    """From a pyarrow Table of string columns (dictionary-encoded in C++) or a pandas DataFrame."""
    rows = table.num_rows if hasattr(table, "num_rows") else len(table)
    names = list(table.column_names) if hasattr(table, "column_names") else list(table.columns)
    all_codes, all_uniques = [], []
    for name in columns:
        if name not in names:
            codes, uniques = np.full(rows, -1, dtype=np.int64), np.asarray([], dtype=object)
        elif hasattr(table, "column_names"):
            codes, uniques = _encode_arrow(table.column(name))
        else:
            import pandas as pd

            codes, uniques = pd.factorize(table[name], use_na_sentinel=True)
            uniques = np.asarray(uniques, dtype=object)
        small = np.int32 if len(uniques) > 32_000 else np.int16
        all_codes.append(np.asarray(codes).astype(small, copy=False))
        all_uniques.append(uniques)
    return EncodedChunk(rows, all_codes, all_uniques, names=[str(n) for n in names])


def _encode_arrow(column) -> tuple[np.ndarray, np.ndarray]:
    """(codes with -1 for missing, distinct values) of a pyarrow string column."""
    from optrr_engine.io.arrow_codes import dictionary_codes

    codes, distinct = dictionary_codes(column)
    return codes, np.asarray(distinct.to_pylist(), dtype=object)


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
        self._chunks: list[EncodedChunk] = []
        self._starts: list[int] = []
        self._rows = 0
        self._lock = threading.Lock()
        self.complete = False
        #: the columns of the file itself (from its first chunk; None until then)
        self.file_columns: list[str] | None = None
        #: {column: why} of the file's columns that are not read (Source.unreadable; from the first chunk)
        self.unreadable: dict[str, str] = {}
        #: reading was cancelled: chunks still arriving from the reader are ignored (the rows read so far stay)
        self.stopped = False

    @property
    def rows(self) -> int:
        return self._rows

    def append(self, frame) -> int:
        """Add a chunk (a pyarrow Table or a DataFrame); returns the number of rows now stored."""
        return self.append_encoded(encode_chunk(frame, self.columns))

    def append_encoded(self, chunk: EncodedChunk) -> int:
        """Add an encoded chunk (thread-safe); returns the number of rows now stored."""
        with self._lock:
            if self.stopped:
                return self._rows
            if self.file_columns is None and chunk.names is not None:
                self.file_columns = list(chunk.names)
                self.unreadable = dict(chunk.unreadable)
            chunk.start = self._rows
            self._chunks.append(chunk)
            self._starts.append(chunk.start)
            self._rows += chunk.rows
            return self._rows

    def stop(self) -> int:
        """No more rows (reading was cancelled); returns the number of rows kept."""
        with self._lock:
            self.stopped = True
            return self._rows

    def column_parts(self, column: int) -> list[tuple]:
        """(codes, distinct values) of one column in every chunk read so far (for summaries)."""
        with self._lock:
            chunks = list(self._chunks)
        return [(chunk.codes[column], chunk.uniques[column]) for chunk in chunks]

    def head_values(self, column: int, rows: int) -> set[str]:
        """The distinct formatted values of one column among its first ``rows`` rows (for fitting widths)."""
        with self._lock:
            chunks = list(self._chunks)
        values: set[str] = set()
        for chunk in chunks:
            if rows <= 0:
                break
            codes = set(chunk.codes[column][:rows].tolist())
            values.update("" if code < 0 else format_cell(chunk.uniques[column][code]) for code in codes)
            rows -= chunk.rows
        return values

    def cell(self, row: int, column: int) -> str:
        i = bisect.bisect_right(self._starts, row) - 1
        if i < 0:
            return ""
        chunk = self._chunks[i]
        code = int(chunk.codes[column][row - chunk.start])
        return "" if code < 0 else format_cell(chunk.uniques[column][code])


def read_encoded(path, options, columns: list[str], emit, progress=None, cancel=None) -> int:
    """Read the whole file and ``emit`` each chunk encoded (runs in a worker process or thread). A column the
    reader cannot give as text (``Source.unreadable``: a Parquet column of lists) is not read: its cells are
    empty, and each chunk names it among the file's columns and in its ``unreadable``."""
    from optrr_engine.io.readers import open_source  # lazily: the window starts before pyarrow is needed
    from optrr_engine.tasks import TaskControl

    ctl = TaskControl(progress, cancel)
    source = open_source(path, options)
    rows = 0
    for table in source.tables():  # (an unreadable column is left out)
        ctl.check()
        chunk = encode_chunk(table, columns)
        chunk.names, chunk.unreadable = list(source.names), dict(source.unreadable)
        rows += chunk.rows
        emit(chunk)
        ctl.report(0.0, f"{rows:,} rows read")
    ctl.report(1.0, f"{rows:,} rows")
    return rows


def load_rows(path, options, store: DataStore, progress=None, cancel=None) -> int:
    """Read the whole file chunk by chunk into ``store`` in this thread. Returns the number of rows.
    The data view polls ``store.rows`` and shows rows as they arrive."""
    rows = read_encoded(path, options, store.columns, store.append_encoded, progress, cancel)
    store.complete = True
    return rows
