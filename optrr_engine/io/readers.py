"""Read data files as text columns, in chunks: the entry points the rest of OptRR uses.

Formats by extension: .csv .tsv .txt (delimited text), .xlsx, .parquet, .sav, .dta. Every value is read as
text (object dtype in pandas) and only truly empty cells (or nulls of typed formats) are missing (NaN):
markers such as "NA" or "?" stay as text so that a release reproduces them exactly. CSV and Parquet are
streamed; Excel, SPSS and Stata are streamed by their libraries too (openpyxl read-only, pyreadstat chunks).

Lines above the header: a first line ``sep=X`` of delimited text (Excel's delimiter hint) gives the delimiter and
is skipped; ``skip_rows`` more lines (Excel: rows), such as title lines, may be skipped in delimited text and
Excel. Error messages keep naming the file's own line (row) numbers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields, replace

from ..errors import InputError
from .formats import format_of, text_path
from .source_base import Source

#: Rows per chunk by default.
CHUNK_ROWS = 100_000


@dataclass
class ReaderOptions:
    """How to read a file. ``None`` means: detect (delimiter, encoding, decimal) or the first sheet. ``skip_rows``:
    lines (Excel: rows) above the header row, blank ones included, after a ``sep=`` line (always skipped);
    None or 0: the header is the first line (after the ``sep=`` line). Delimited text and Excel only."""

    delimiter: str | None = None
    encoding: str | None = None
    decimal: str | None = None
    sheet: str | int | None = None
    skip_rows: int | None = None
    chunk_rows: int = CHUNK_ROWS

    def to_dict(self) -> dict:
        """The options that differ from detection (for configurations and manifests)."""
        return {k: v for k, v in asdict(self).items() if v is not None and k != "chunk_rows"}

    @classmethod
    def from_dict(cls, d: dict | None) -> ReaderOptions:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (d or {}).items() if k in names and v not in (None, "")})


#: Formats whose files may have rows above the header (``skip_rows``).
SKIP_ROWS_FORMATS = ("csv", "xlsx")
_FORMAT_NAMES = {"parquet": "Parquet", "sav": "SPSS", "dta": "Stata"}


def _check_delimiter(delim: str, given) -> str:
    """``delim`` if one character a delimited file can use; a clear error naming ``given`` otherwise."""
    if len(delim) != 1 or delim in '"\r\n':
        raise InputError(f"delimiter must be one character such as , ; | or tab; got {given!r}")
    return delim


def shown_delimiter(delim: str) -> str:
    """A delimiter as messages show it ("tab" for a tab)."""
    return "tab" if delim == "\t" else repr(delim)


def _whole_number(value) -> int | None:
    """``value`` as a whole number >= 0 (an int, an integral float or digits as text); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value >= 0 else None


def _validate(options: ReaderOptions) -> ReaderOptions:
    if options.delimiter is not None:
        delim = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(options.delimiter, options.delimiter)
        options = replace(options, delimiter=_check_delimiter(delim, options.delimiter))
    if options.skip_rows is not None:
        skip = _whole_number(options.skip_rows)
        if skip is None:
            raise InputError(
                f"skip_rows (--skip-rows, the rows above the header) must be a whole number 0 or more; "
                f"got {options.skip_rows!r}"
            )
        options = replace(options, skip_rows=skip)
    if options.decimal is not None and options.decimal not in (".", ","):
        raise InputError(f"decimal mark must be . or ,; got {options.decimal!r}")
    try:
        chunk = int(options.chunk_rows)
    except (TypeError, ValueError):
        chunk = 0
    if chunk < 1:
        raise InputError(f"chunk_rows must be a positive whole number; got {options.chunk_rows!r}")
    if options.encoding is not None:
        from .csv_source import check_encoding

        check_encoding(options.encoding)
    return replace(options, chunk_rows=chunk)


def _check_input(path) -> str:
    path = text_path(path, "input file")
    if not os.path.exists(path):
        raise InputError(f"input file {path} does not exist")
    if os.path.isdir(path):
        raise InputError(f"{path} is a folder; give a data file")
    if not os.path.isfile(path):
        raise InputError(
            f"input file {path} is not a regular file (a named pipe, device or socket); data files must be regular "
            "files: save the data to a file and give that"
        )
    if not os.access(path, os.R_OK):
        raise InputError(f"input file {path} cannot be read (permission denied)")
    return path


def detect_options(path, options: ReaderOptions | None = None) -> ReaderOptions:
    """Fill in what was not given: encoding (BOM, UTF-8, then cp1252 / latin-1; see :mod:`.sniff`), delimiter
    and decimal mark for delimited text (a first line ``sep=X`` gives the delimiter; the lines above the header
    are left out of the samples). Other formats need no detection; ``skip_rows`` > 0 is refused for them."""
    from . import sniff

    path = _check_input(path)
    options = _validate(options or ReaderOptions())
    fmt = format_of(path)
    base = os.path.basename(path)
    if options.skip_rows and fmt not in SKIP_ROWS_FORMATS:
        raise InputError(
            f"{base} is a {_FORMAT_NAMES.get(fmt, fmt)} file: it has no rows above its column names; skip_rows "
            "(--skip-rows, rows above the header) applies to delimited text and Excel only: remove it or set it to 0"
        )
    if fmt != "csv" or os.path.getsize(path) == 0:
        return options
    head, windows = sniff.read_samples(path)
    _refuse_binary(base, head, options.encoding)
    encoding = options.encoding or sniff.guess_encoding(head, windows)
    if options.encoding is None and encoding == "utf-8":  # (a byte-order mark gives "utf-8-sig")
        line = sniff.mixed_utf8_line(head)
        if line is not None:
            raise InputError(
                f"{base}: line {line:,} is not valid UTF-8 but other lines are (mixed encodings); fix that line, "
                "or give --encoding to read the whole file in one encoding"
            )
    sep = _sep_delimiter(base, head, encoding, options.delimiter)
    lines = sniff.sample_lines(head, encoding, skip=sniff.lines_above_header(head, encoding, options.skip_rows))
    default = "\t" if path.lower().endswith(".tsv") else ","
    delimiter = options.delimiter or sep or sniff.guess_delimiter(lines, default)
    decimal = options.decimal or sniff.guess_decimal(lines, delimiter)
    return replace(options, encoding=encoding, delimiter=delimiter, decimal=decimal)


def _refuse_binary(base: str, head: bytes, encoding: str | None) -> None:
    """Refuse a delimited file whose ``head`` holds NUL bytes (:func:`.sniff.looks_binary`): a binary file, or
    UTF-16 text without a byte-order mark. Also when an encoding was given (a configuration's ``input``), unless
    that encoding is UTF-16 or UTF-32, whose text does hold NUL bytes."""
    from . import sniff

    if encoding is not None and sniff.wide_encoding(encoding):
        return
    if not sniff.looks_binary(head):
        return
    utf16 = sniff.utf16_without_bom(head)
    if utf16 is not None:
        raise InputError(
            f"{base} looks like UTF-16 text without a byte-order mark: give --encoding {utf16} "
            f"(or {'utf-16-be' if utf16 == 'utf-16-le' else 'utf-16-le'})"
        )
    raise InputError(f"{base} is not a text file (it contains NUL bytes); choose a data file")


def _sep_delimiter(base: str, head: bytes, encoding: str, given: str | None) -> str | None:
    """The delimiter a first line ``sep=X`` names (None without one); refused when it cannot be a delimiter or
    differs from the delimiter the user gave."""
    from . import sniff

    sep = sniff.sep_line(head, encoding)
    if sep is None:
        return None
    if sep in '"':
        raise InputError(f"{base}: its first line 'sep={sep}' names a quote as the delimiter; fix or remove that line")
    if given is not None and given != sep:
        raise InputError(
            f"{base}: its first line 'sep={sep}' says the delimiter is {shown_delimiter(sep)}, but the delimiter "
            f"{shown_delimiter(given)} was given (--delimiter); remove --delimiter, or fix the sep= line"
        )
    return sep


def open_source(path, options: ReaderOptions | None = None):
    """A :class:`~optrr_engine.io.source_base.Source` for the file (options detected where not given)."""
    path = _check_input(path)
    fmt = format_of(path)
    options = detect_options(path, options)
    source: Source
    if fmt == "csv":
        from .csv_source import CsvSource

        source = CsvSource(path, options)
    else:
        from . import typed_sources

        if fmt == "parquet":
            source = typed_sources.ParquetSource(path, options)
        elif fmt == "xlsx":
            source = typed_sources.ExcelSource(path, options)
        else:
            source = typed_sources.StatSource(path, options, fmt)
    check_spaced_names(source.names, path)
    return source


def check_spaced_names(names: list[str], path) -> None:
    """Refuse column names that differ only by white space at their start or end ("Smoker" and "Smoker "): they
    look the same everywhere they are shown, like a name given twice."""
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        key = name.strip()
        if key in seen:
            first = names[seen[key]]
            raise InputError(
                f"{os.path.basename(str(path))}: column names {first!r} and {name!r} (columns {seen[key] + 1} and "
                f"{i + 1}) differ only by spaces at their start or end; rename one"
            )
        seen[key] = i


def column_names(path, options: ReaderOptions | None = None) -> list[str]:
    return list(open_source(path, options).names)


def iter_tables(path, options: ReaderOptions | None = None, columns=None) -> Iterator:
    """``pyarrow.Table`` chunks of string columns (nulls for missing values): ``columns``, or by default every
    column the reader can give as text (:meth:`.source_base.Source.tables`)."""
    yield from open_source(path, options).tables(columns)


def table_to_frame(table):
    """A string table as a pandas DataFrame of object dtype, missing values NaN."""
    import numpy as np
    import pandas as pd

    data = {}
    for name, col in zip(table.column_names, table.columns, strict=True):
        values = np.asarray(col.to_pylist(), dtype=object)
        values[values == None] = np.nan  # noqa: E711 - elementwise comparison with None
        data[name] = values
    return pd.DataFrame(data, columns=list(table.column_names), dtype=object)


def iter_chunks(path, options: ReaderOptions | None = None, columns=None) -> Iterator:
    """pandas DataFrames of at most ``options.chunk_rows`` rows of ``columns`` (by default every readable one, as
    :func:`iter_tables`); every value a str, missing values NaN."""
    for table in iter_tables(path, options, columns):
        yield table_to_frame(table)


def read_preview(path, options: ReaderOptions | None = None, nrows: int = 200):
    """The first ``nrows`` rows (every column the reader can give as text) as a DataFrame like :func:`iter_chunks`
    gives."""
    import pyarrow as pa

    options = replace(options or ReaderOptions(), chunk_rows=max(1, int(nrows)))
    source = open_source(path, options)
    for table in source.tables():
        return table_to_frame(table.slice(0, nrows))
    empty = pa.table({n: pa.array([], type=pa.string()) for n in source.readable_names()})
    return table_to_frame(empty)


def count_rows(path, options: ReaderOptions | None = None) -> int | None:
    """Number of data rows when the format stores it (Parquet, SPSS, Stata); None otherwise (it would
    need a full pass)."""
    source = open_source(path, options)
    return source.row_count if source.format in ("parquet", "sav", "dta") else None
