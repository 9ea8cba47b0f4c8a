"""Typed formats read as text: Parquet (streamed by row groups), Excel .xlsx (openpyxl read-only, streamed
row by row), SPSS .sav and Stata .dta (pyreadstat, read in chunks; value labels become the category names,
user-missing values are read as missing). Numbers, dates and booleans are turned into text by :mod:`.values`. In
every format a cell that is empty or only white space is missing (:func:`~.source_base.blank_to_null`); rows of
missing values only are skipped in Excel, kept in the others (see :mod:`.source_base`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import InputError
from .source_base import Source, blank_to_null, check_names, is_blank, skip_rows_hint
from .values import format_value, string_array

if TYPE_CHECKING:
    from .xlsx_scan import SheetScan


def _open_error(path, exc: Exception, what: str) -> InputError:
    first = (str(exc).splitlines() or [exc.__class__.__name__])[0]
    return InputError(f"{os.path.basename(str(path))}: could not be read as {what} ({first[:160]})")


#: Why a Parquet column of lists, structs or maps cannot be read (:attr:`Source.unreadable`).
NESTED = "holds nested values (lists/structs)"


class ParquetSource(Source):
    """A Parquet file, streamed by row groups. Columns of nested values (lists, structs, maps) are
    ``unreadable``: named, but only a configuration that drops them (or does not request them) reads the file."""

    format = "parquet"

    def __init__(self, path, options):
        super().__init__(path, options)
        import pyarrow.parquet as pq

        try:
            self._file = pq.ParquetFile(self.path)
        except Exception as exc:
            raise _open_error(path, exc, "Parquet") from None
        self.names = check_names(self._file.schema_arrow.names, self.path)
        self.row_count = int(self._file.metadata.num_rows)
        self.unreadable = {f.name: NESTED for f in self._file.schema_arrow if _nested(f.type)}

    def _tables(self, columns):
        import pyarrow as pa

        try:
            for batch in self._file.iter_batches(batch_size=self.chunk_rows(columns), columns=columns):
                yield pa.table([blank_to_null(_as_text(col)) for col in batch.columns], names=batch.schema.names)
        except (pa.ArrowInvalid, OSError) as exc:
            raise _open_error(self.path, exc, "Parquet") from None


def _nested(t) -> bool:
    import pyarrow.types as pt

    return pt.is_nested(t)


def _as_text(col):
    """Any flat Arrow column as strings; floats through :func:`format_value` so 3.0 prints as 3."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pt

    t = col.type
    if pt.is_dictionary(t):
        col = col.cast(t.value_type) if not pt.is_string(t.value_type) else pc.cast(col, pa.string())
        t = col.type
    if pt.is_string(t):
        return col
    if pt.is_large_string(t):
        return pc.cast(col, pa.string())
    if pt.is_floating(t):
        return string_array(col.to_pylist())
    if pt.is_boolean(t):
        return pc.if_else(col, "true", "false")
    if pt.is_binary(t) or pt.is_large_binary(t):
        try:
            return pc.cast(col, pa.string())
        except pa.ArrowInvalid:
            raise InputError("a binary Parquet column is not valid UTF-8 text") from None
    if pt.is_timestamp(t) or pt.is_date(t) or pt.is_time(t):
        return string_array(col.to_pylist())
    return pc.cast(col, pa.string())


class ExcelSource(Source):
    """The chosen sheet (name or 0-based index; the first by default); the first row with a value after
    ``options.skip_rows`` rows (``header_row``, 1-based: empty rows above it are skipped, as blank lines above a
    delimited file's header) names the columns; row numbers in messages are the sheet's own. Rows whose
    every cell is missing (no value, or blank text) are no records: skipped and counted in ``empty_rows_skipped``.
    Formula cells are read as their stored results; a chosen column with a formula cell without one (a file from
    a program that does not calculate) is refused. Merged cells are not filled: only a range's first cell holds
    the value, the others read as missing; :meth:`column_warnings` names the ranges that reach the data rows on
    the columns they affect."""

    format = "xlsx"
    _scan: SheetScan | None = None

    def __init__(self, path, options):
        super().__init__(path, options)
        import openpyxl

        base = os.path.basename(self.path)
        try:
            self._book = openpyxl.load_workbook(self.path, read_only=True, data_only=True)
        except Exception as exc:
            raise _open_error(path, exc, "an Excel .xlsx workbook") from None
        sheet = options.sheet
        sheets = self._book.sheetnames
        if sheet is None or sheet == "":
            self._sheet = self._book[sheets[0]]
        elif str(sheet) in sheets:
            self._sheet = self._book[str(sheet)]
        elif str(sheet).lstrip("-").isdigit() and 0 <= int(sheet) < len(sheets):
            self._sheet = self._book[sheets[int(sheet)]]
        else:
            raise InputError(f"{base} has no sheet {sheet!r}; its sheets are: {', '.join(sheets)}")
        first = int(options.skip_rows or 0) + 1
        try:
            found = _first_filled_row(self._sheet, first)
        except Exception as exc:  # a damaged sheet inside a valid zip: XML, zlib or zip errors
            raise _open_error(path, exc, "an Excel .xlsx workbook") from None
        if found is None:
            where = "is empty" if first == 1 else f"has nothing in row {first} or below (after skip_rows)"
            raise InputError(f"{base}: the sheet {where}; choose a sheet with a header row and data rows")
        #: the 1-based row that names the columns: the first with a value after ``skip_rows`` rows, as blank lines
        #: above a delimited file's header are skipped
        self.header_row, header = found[0], list(found[1])
        while header and header[-1] is None:
            header.pop()
        self.names = check_names([format_value(h) for h in header], self.path)
        dims = self._sheet.max_row
        self.row_count = None if dims is None else max(0, int(dims) - self.header_row)

    def _sheet_scan(self) -> SheetScan:
        """The sheet's merged ranges and formulas without a stored result (one scan of its XML, cached; nothing
        found when the XML cannot be opened)."""
        from .xlsx_scan import SheetScan, scan_sheet

        if self._scan is None:
            try:
                with self._sheet._get_source() as stream:
                    self._scan = scan_sheet(stream)
            except Exception:  # the reading pass reports a damaged sheet
                self._scan = SheetScan()
        return self._scan

    def column_warnings(self) -> dict[str, list[str]]:
        """{column: a warning naming the merged ranges whose cells in that column read as missing}."""
        from .xlsx_scan import affected_columns

        found: dict[str, list[str]] = {}
        for ref in self._sheet_scan().merged:  # a range without cells in the data rows affects no column
            for col in affected_columns(ref, self.header_row + 1):
                if col <= len(self.names):
                    found.setdefault(self.names[col - 1], []).append(ref)
        return {
            name: [
                f"merged cells {', '.join(refs)}: only the first cell holds the value, the others are read as missing "
                "- unmerge and fill them"
            ]
            for name, refs in found.items()
        }

    def _check_formulas(self, columns) -> None:
        """Refuse a chosen column with formula cells without a stored result (read as missing otherwise)."""
        from openpyxl.utils.cell import get_column_letter

        chosen = set(columns or self.names)
        for col, row in sorted(self._sheet_scan().formulas.items()):
            if row > self.header_row and col <= len(self.names) and self.names[col - 1] in chosen:
                raise InputError(
                    f"{os.path.basename(self.path)}: the cells of column {self.names[col - 1]!r} hold formulas without "
                    f"stored results (cell {get_column_letter(col)}{row} and perhaps others): open the file in Excel "
                    "and save it, then read it again"
                )

    def fraction_done(self) -> float:
        if not self.row_count:
            return 0.0
        return min(1.0, (self.rows_read + self.empty_rows_skipped) / self.row_count)

    def _tables(self, columns):
        try:
            self._check_formulas(columns)
            yield from self._sheet_tables(columns)
        except InputError:
            raise
        except Exception as exc:  # a damaged sheet inside a valid zip: XML, zlib or zip errors
            raise _open_error(self.path, exc, "an Excel .xlsx workbook") from None
        finally:
            self._book.close()

    def _sheet_tables(self, columns):
        import pyarrow as pa

        width = len(self.names)
        keep = [self.names.index(c) for c in columns] if columns else list(range(width))
        names = [self.names[i] for i in keep]
        block: list[list] = [[] for _ in keep]
        chunk = self.chunk_rows(columns)
        filled = 0
        first = self.header_row + 1
        for line, row in enumerate(self._sheet.iter_rows(min_row=first, values_only=True), start=first):
            if _empty_row(row):
                self.empty_rows_skipped += 1
                continue
            if len(row) > width and any(v is not None for v in row[width:]):
                raise InputError(
                    f"{os.path.basename(self.path)}: row {line} has values to the right of the last named column; "
                    f"name that column or clear those cells{_header_hint(row, line, width)}"
                )
            for out, i in zip(block, keep, strict=True):
                out.append(format_value(row[i]) if i < len(row) else None)
            filled += 1
            if filled == chunk:
                yield pa.table([blank_to_null(pa.array(c, type=pa.string())) for c in block], names=names)
                block = [[] for _ in keep]
                filled = 0
        if filled:
            yield pa.table([blank_to_null(pa.array(c, type=pa.string())) for c in block], names=names)


def _first_filled_row(sheet, first: int) -> tuple[int, tuple] | None:
    """(sheet row number, values) of the first row at or below row ``first`` that has a value; None if none has."""
    rows = enumerate(sheet.iter_rows(min_row=first, values_only=True), first)
    return next(((n, row) for n, row in rows if not _empty_row(row)), None)


def _empty_row(row) -> bool:
    """Whether a sheet row has no value: every cell missing or blank text (no record; skipped above the header)."""
    return row is None or all(v is None or is_blank(v) for v in row)


def _header_hint(row, line: int, width: int) -> str:
    """A suggestion of --skip-rows when the header names one column only (a title row?) and ``row`` (sheet row
    ``line``), wider than it, looks like a header row: two or more cells, all text, none blank."""
    texts = [v for v in row if v is not None]
    if width <= 1 and len(texts) > 1 and all(isinstance(v, str) and v.strip() for v in texts):
        return skip_rows_hint("row", line, line - 1)
    return ""


class StatSource(Source):
    """SPSS .sav or Stata .dta through pyreadstat, with value labels applied (labels become categories). A string
    cell that is blank (empty or only white space: how both formats store a missing text) is missing; a row of
    missing values only is kept (a case of the file). ``value_labels``:
    {column: {code: label}} as the file declares them (a label's code gives its order); ``user_missing``: {column:
    the user-missing values the file declares, as text such as "9 = 'refused'"}: pyreadstat reads them as missing,
    like empty cells."""

    def __init__(self, path, options, fmt: str):
        super().__init__(path, options)
        import pyreadstat

        self.format = fmt
        self._read = pyreadstat.read_sav if fmt == "sav" else pyreadstat.read_dta
        try:
            _, meta = self._read(self.path, metadataonly=True, user_missing=True)
        except Exception as exc:
            raise _open_error(path, exc, "an SPSS .sav file" if fmt == "sav" else "a Stata .dta file") from None
        self.names = check_names(list(meta.column_names), self.path)
        self.row_count = int(meta.number_rows) if meta.number_rows is not None and meta.number_rows >= 0 else None
        self.value_labels: dict[str, dict[float, str]] = {
            str(c): {float(k): str(v) for k, v in labels.items() if _is_code(k)}
            for c, labels in (meta.variable_value_labels or {}).items()
        }
        self.user_missing = _user_missing(meta, self.value_labels)

    def _tables(self, columns):
        import pyarrow as pa
        import pyreadstat

        chunk = self.chunk_rows(columns)
        try:
            reader = pyreadstat.read_file_in_chunks(
                self._read, self.path, chunksize=chunk, apply_value_formats=True, usecols=columns
            )
            for frame, _ in reader:
                names = [str(c) for c in frame.columns]
                arrays = [blank_to_null(string_array(frame[c].astype(object).tolist())) for c in frame.columns]
                yield pa.table(arrays, names=names)
        except InputError:
            raise
        except Exception as exc:
            raise _open_error(self.path, exc, self.format) from None


def _is_code(code) -> bool:
    """Whether a value-label key is a number (SPSS and Stata label numbers; a string column's labels are not
    ordered by code)."""
    return isinstance(code, (int, float)) and not isinstance(code, bool)


def _user_missing(meta, labels: dict[str, dict[float, str]]) -> dict[str, str]:
    """{column: its declared user-missing values as text ("9 = 'refused'", "7 to 9", Stata's ".a")}."""
    out: dict[str, str] = {}
    for col, ranges in (getattr(meta, "missing_ranges", None) or {}).items():
        named = labels.get(str(col), {})
        parts = []
        for r in ranges:
            lo, hi = r.get("lo"), r.get("hi")
            if lo == hi:
                label = named.get(float(lo)) if _is_code(lo) else None
                text = repr(lo) if isinstance(lo, str) else format_value(lo)
                parts.append(f"{text} = {label!r}" if label is not None else str(text))
            else:
                parts.append(f"{format_value(lo)} to {format_value(hi)}")
        if parts:
            out[str(col)] = ", ".join(parts)
    for col, codes in (getattr(meta, "missing_user_values", None) or {}).items():
        if codes:
            out[str(col)] = ", ".join(f".{c}" for c in codes)
    return out
