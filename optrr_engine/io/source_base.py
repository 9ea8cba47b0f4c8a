"""What every file reader provides: column names, an optional row count, and a stream of string tables.

A source yields ``pyarrow.Table`` chunks whose columns are all strings (missing values are nulls) with at
most ``chunk_rows`` rows (fewer for very wide files: at most CHUNK_CELLS cells); every chunk but the last
has exactly that many rows, so the chunking (and with it a seeded run) does not depend on how the
underlying library splits the file.

Missing values, one rule for every format (:func:`blank_to_null`): a cell that is empty or only white space
(CSV, Excel, Parquet strings, SPSS, Stata) is missing, never a category such as '  ' that no one can see.
Rows: in CSV and Excel a row whose every cell is missing is no record (a ";;" row of a spreadsheet export): it
is skipped and counted in ``empty_rows_skipped``; Parquet, SPSS and Stata store their cases explicitly (their
metadata counts them), so there a row whose every value is missing is kept: a case with all values missing is
still a case.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from ..errors import InputError

#: Cells per chunk at most (a chunk of a very wide file has fewer rows), to bound memory.
CHUNK_CELLS = 4_000_000


def check_names(names: list, path) -> list[str]:
    """Column names must be present and distinct."""
    base = os.path.basename(str(path))
    out = []
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        text = "" if name is None else str(name)
        if text.strip() == "":
            raise InputError(f"{base}: column {i + 1} has no name in the header row; give every column a name")
        if text in seen:
            raise InputError(
                f"{base}: column name {text!r} appears twice (columns {seen[text] + 1} and {i + 1}); rename one"
            )
        seen[text] = i
        out.append(text)
    if not out:
        raise InputError(f"{base}: no columns found in the header row")
    return out


def blank_to_null(col, empty_is_null: bool = False):
    """``col`` (Arrow strings) with every blank cell (empty, or only white space as Unicode defines it) null.
    ``empty_is_null``: the caller's reader already made empty cells null (only white space is left to test)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, pa.ChunkedArray):
        return pa.chunked_array([blank_to_null(c, empty_is_null) for c in col.chunks], type=col.type)
    if len(col) == col.null_count:
        return col
    blank = pc.utf8_is_space(col)  # false for empty text
    if not empty_is_null:
        blank = pc.or_(blank, pc.equal(pc.binary_length(col), 0))
    if not blank.true_count:
        return col
    return pc.if_else(blank, pa.scalar(None, pa.string()), col)


def is_blank(value) -> bool:
    """Whether one cell value is blank text (empty, or only white space), as :func:`blank_to_null` judges it."""
    return isinstance(value, str) and (value == "" or value.isspace())


def skip_rows_hint(unit: str, number: int, skip: int) -> str:
    """The suggestion of --skip-rows appended to a header error: if ``unit`` ("line" or "row") ``number`` of the
    file is the header row, ``skip`` rows above it. It ends with the fixed words "give --skip-rows N (rows above
    the header)", so that the window can reword them for its own setting."""
    return (
        f"; if {unit} {number:,} is the header row (the {unit}s above it titles), give --skip-rows {skip} "
        "(rows above the header)"
    )


def check_columns(requested, names: list[str], path) -> list[str] | None:
    if requested is None:
        return None
    requested = [str(c) for c in requested]
    missing = [c for c in requested if c not in names]
    if missing:
        raise InputError(f"{os.path.basename(str(path))} has no column {missing[0]!r}")
    return requested


def rechunk(tables: Iterable, chunk_rows: int) -> Iterator:
    """Re-slice a stream of tables / record batches into tables of exactly ``chunk_rows`` rows (last: fewer)."""
    import pyarrow as pa

    pending: list = []
    rows = 0
    for t in tables:
        if t.num_rows == 0:
            continue
        if isinstance(t, pa.RecordBatch):
            t = pa.Table.from_batches([t])
        pending.append(t)
        rows += t.num_rows
        while rows >= chunk_rows:
            whole = pa.concat_tables(pending) if len(pending) > 1 else pending[0]
            yield whole.slice(0, chunk_rows)
            rest = whole.slice(chunk_rows)
            pending = [rest] if rest.num_rows else []
            rows = rest.num_rows
    if rows:
        yield pa.concat_tables(pending) if len(pending) > 1 else pending[0]


class Source:
    """Base class. Subclasses set ``names`` and ``row_count`` and implement ``_tables`` (blank cells made missing
    by :func:`blank_to_null`). After (or during) a pass of :meth:`tables`, ``rows_read`` is the rows yielded and
    ``empty_rows_skipped`` the rows of the file that were skipped because every cell was missing (delimited text
    and Excel; 0 for Parquet, SPSS and Stata, which keep such rows as cases; see the module's docstring).
    ``unreadable``: {column: why its values cannot be read as text (e.g. Parquet lists)}; such a column is named
    in ``names`` but :meth:`tables` leaves it out by default and refuses it by name, so it can only be dropped.
    :meth:`column_warnings`: notes on columns that are read, but not quite as the file shows them (merged Excel
    cells)."""

    format = "?"

    def __init__(self, path, options):
        self.path = str(path)
        self.options = options
        self.names: list[str] = []
        self.row_count: int | None = None
        self.rows_read = 0
        self.empty_rows_skipped = 0
        self.unreadable: dict[str, str] = {}

    def column_warnings(self) -> dict[str, list[str]]:
        """{column: warnings about how its cells are read} (none by default)."""
        return {}

    def readable_names(self) -> list[str]:
        """The columns :meth:`tables` can read: ``names`` without the ``unreadable`` ones."""
        return [n for n in self.names if n not in self.unreadable]

    def fraction_done(self) -> float:
        if self.row_count:
            return min(1.0, self.rows_read / self.row_count)
        return 0.0

    def _tables(self, columns: list[str] | None) -> Iterator:
        raise NotImplementedError

    def chunk_rows(self, columns=None) -> int:
        """Rows per chunk: ``options.chunk_rows``, fewer for wide files (at most CHUNK_CELLS cells)."""
        width = len(columns) if columns else len(self.names)
        return max(1, min(int(self.options.chunk_rows), CHUNK_CELLS // max(1, width)))

    def tables(self, columns=None) -> Iterator:
        """String tables of the chosen columns, in file order; by default (None) every column but the
        ``unreadable`` ones (:meth:`readable_names`). An ``unreadable`` column asked for by name is refused with
        the reason."""
        columns = check_columns(columns, self.names, self.path)
        if columns is None and self.unreadable:
            columns = self.readable_names()
        bad = [c for c in columns or () if c in self.unreadable]
        if bad:
            raise InputError(
                f"{os.path.basename(self.path)}: column {bad[0]!r} {self.unreadable[bad[0]]}: it cannot be released; "
                "give it the role drop"
            )
        self.rows_read = 0
        self.empty_rows_skipped = 0
        for table in rechunk(self._tables(columns), self.chunk_rows(columns)):
            self.rows_read += table.num_rows
            yield table


def prefetched(iterable: Iterable, depth: int = 2) -> Iterator:
    """Iterate ``iterable`` in a background thread, keeping up to ``depth`` items ready (parsing the next
    chunk overlaps with processing this one; pyarrow and numpy release the GIL). Errors are re-raised here;
    leaving the loop early stops the thread."""
    import queue
    import threading

    items: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()
    done = object()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in iterable:
                if not put((item, None)):
                    return
            put((done, None))
        except BaseException as exc:
            put((done, exc))

    thread = threading.Thread(target=work, name="optrr-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = items.get()
            if item is done:
                if exc is not None:
                    raise exc
                return
            yield item
    finally:
        # The worker sees ``stop`` within its put timeout, so no queue operation is needed here: an interrupt that
        # landed inside ``items.get`` above may have left the queue's lock in an unknown state, and a ``get`` here
        # could then wait for ever (seen once with a second Ctrl-C).
        stop.set()
        thread.join()
