"""Writers that append tables of text columns to a (temporary) file: CSV, Parquet, Excel, SPSS, Stata.

Columns may be plain strings or dictionary arrays (codes + labels, as the release codec makes them); nulls
are written as empty cells. CSV: UTF-8 (with a byte-order mark when asked), "\\n" line ends, a field is
quoted only when it holds the delimiter, a quote or a line break (RFC 4180). CSV and Parquet stream with
bounded memory; Excel streams through openpyxl's write-only mode (at most 1,048,575 data rows); SPSS and
Stata files are written by pyreadstat at the end and so hold the whole release in memory; their column names
are checked first (:func:`check_stat_names`), since pyreadstat refuses some names and silently alters others.
"""

from __future__ import annotations

import os
import re

from ..errors import InputError

#: Data rows an Excel sheet can hold (one more row is the header).
XLSX_MAX_ROWS = 1_048_575

#: The program that reads each statistical output format, for messages.
STAT_PROGRAMS = {"sav": "SPSS", "dta": "Stata"}
#: Longest variable name: SPSS counts UTF-8 bytes, Stata (format 118, pyreadstat's) characters.
SAV_MAX_NAME_BYTES = 64
DTA_MAX_NAME_CHARS = 32
#: SPSS keywords that cannot name a variable, in any case (SPSS names ignore case; readstat refuses the upper-case
#: spelling only, and SPSS itself the others).
SAV_RESERVED = frozenset({"ALL", "AND", "BY", "EQ", "GE", "GT", "LE", "LT", "NE", "NOT", "OR", "TO", "WITH"})
#: Stata's reserved names (case-sensitive), besides the storage types str1 ... str2045.
DTA_RESERVED = frozenset(
    {"_all", "_b", "byte", "_coef", "_cons", "double", "float", "if", "in", "int", "long", "_n", "_N", "_pi"}
    | {"_pred", "_rc", "_se", "_skip", "strL", "using", "with"}
)
DTA_MAX_STR_WIDTH = 2045
#: ASCII characters a name may hold besides letters and digits (any non-ASCII character passes, as in readstat).
_NAME_PUNCTUATION = {"sav": "@#$._", "dta": "_"}


def _bad_characters(fmt: str, name: str) -> list[str]:
    """The characters of ``name`` readstat refuses (ASCII other than letters, digits and the format's punctuation)
    or cannot encode (lone surrogates); a NUL would silently cut the name short."""
    allowed = _NAME_PUNCTUATION[fmt]
    ascii_bad = {ch for ch in name if ch < "\x80" and not ch.isalnum() and ch not in allowed}
    return sorted(ascii_bad | {ch for ch in name if "\ud800" <= ch <= "\udfff"})


def _stat_name_problem(fmt: str, name: str) -> str | None:
    """Why ``name`` cannot be a variable name of a ``fmt`` ("sav" / "dta") file written by pyreadstat: refused, or
    written altered (a NUL cuts it short); None when it can. Names are judged one at a time (see check_stat_names)."""
    program = STAT_PROGRAMS[fmt]
    if not name:
        return f"{program} names cannot be empty"
    if " " in name:
        return f"{program} names cannot contain spaces"
    first = "a letter or an underscore" if fmt == "dta" else "a letter"
    if not (name[0].isalpha() or (fmt == "dta" and name[0] == "_")):
        return f"{program} names must begin with {first}"
    bad = _bad_characters(fmt, name)
    if bad:
        extra = " ".join(_NAME_PUNCTUATION[fmt])
        return f"{program} names hold only letters, digits and {extra} (not {' '.join(repr(ch) for ch in bad)})"
    if fmt == "sav" and len(name.encode("utf-8")) > SAV_MAX_NAME_BYTES:
        return f"SPSS names are at most {SAV_MAX_NAME_BYTES} bytes long in UTF-8 (letters such as é take 2)"
    if fmt == "dta" and len(name) > DTA_MAX_NAME_CHARS:
        return f"Stata names are at most {DTA_MAX_NAME_CHARS} characters long"
    if fmt == "sav" and name.upper() in SAV_RESERVED:
        return f"SPSS reserves the word {name.upper()} (in any case)"
    width = re.fullmatch(r"str([0-9]+)", name) if fmt == "dta" else None
    if fmt == "dta" and (name in DTA_RESERVED or (width and 1 <= int(width.group(1)) <= DTA_MAX_STR_WIDTH)):
        return f"Stata reserves the name {name}"
    return None


def _same_name_groups(fmt: str, names) -> list[list[str]]:
    """Groups of names the format takes as one variable: equal names, and for SPSS names differing only in case."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(name.casefold() if fmt == "sav" else name, []).append(name)
    return [group for group in groups.values() if len(group) > 1]


def check_stat_names(fmt: str, names) -> None:
    """Refuse (InputError naming every offending column, why, and the way out) column names that an SPSS ("sav")
    or Stata ("dta") file written by pyreadstat would refuse or alter; other formats take any name."""
    if fmt not in STAT_PROGRAMS:
        return
    names = [str(n) for n in names]
    program = STAT_PROGRAMS[fmt]
    problems = [f"column {n!r}: {why}" for n in names if (why := _stat_name_problem(fmt, n)) is not None]
    for group in _same_name_groups(fmt, names):
        same = " and ".join(repr(n) for n in dict.fromkeys(group))
        why = "SPSS names ignore case, so they are one name" if len(set(group)) > 1 else "the name appears twice"
        problems.append(f"columns {same}: {why}")
    if problems:
        raise InputError(
            f"{program} (.{fmt}) cannot take these column names: {'; '.join(problems)}. Write the release "
            "as .csv, .parquet or .xlsx instead, or rename the columns in the source file (and in the release "
            "configuration)"
        )


class TableWriter:
    def __init__(self, path, names: list[str]):
        self.path = os.fspath(path)
        self.names = list(names)
        self.rows = 0

    def write(self, table) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Finish the file (flushed and synced to disk)."""

    def abort(self) -> None:
        """Release resources after an error (the caller deletes the temporary file)."""


def _csv_escape(values, delimiter: str):
    """Quote the strings that need it: delimiter, quote, CR or LF inside; inner quotes doubled."""
    import re

    import pyarrow.compute as pc

    pattern = "[" + re.escape(delimiter + '"') + "\r\n]"
    need = pc.fill_null(pc.match_substring_regex(values, pattern), False)
    quoted = pc.binary_join_element_wise('"', pc.replace_substring(values, '"', '""'), '"', "")
    return pc.if_else(need, quoted, values)


def csv_text_column(col, delimiter: str):
    """A column as escaped CSV text, nulls as empty strings; dictionary columns escape their labels once."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pt

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pt.is_dictionary(col.type):
        labels = _csv_escape(pc.cast(col.dictionary, pa.string()), delimiter)
        out = labels.take(col.indices)
    else:
        out = _csv_escape(pc.cast(col, pa.string()), delimiter)
    return pc.fill_null(out, "")


class CsvWriter(TableWriter):
    def __init__(self, path, names, delimiter: str = ",", bom: bool = False):
        super().__init__(path, names)
        import re

        import pyarrow as pa

        self.delimiter = delimiter
        self._pattern = "[" + re.escape(delimiter + '"') + "\r\n]"
        self._fh = open(self.path, "wb")
        if bom:
            self._fh.write(b"\xef\xbb\xbf")
        header = csv_text_column(pa.array(self.names, type=pa.string()), delimiter).to_pylist()
        self._fh.write((delimiter.join(header) + "\n").encode("utf-8"))

    def _needs_quotes(self, col) -> bool:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.types as pt

        if isinstance(col, pa.ChunkedArray):
            return any(self._needs_quotes(c) for c in col.chunks)
        values = col.dictionary if pt.is_dictionary(col.type) else col
        if not pt.is_string(values.type):
            values = pc.cast(values, pa.string())
        return bool(pc.any(pc.match_substring_regex(values, self._pattern)).as_py())

    def write(self, table) -> None:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv

        if table.num_rows == 0:
            return
        if not any(self._needs_quotes(c) for c in table.columns):  # fast path: Arrow's writer, no quoting needed
            options = pcsv.WriteOptions(include_header=False, delimiter=self.delimiter, quoting_style="none")
            pcsv.write_csv(table, self._fh, write_options=options)
            self.rows += table.num_rows
            return
        cols = [csv_text_column(c, self.delimiter) for c in table.columns]
        joined = cols[0] if len(cols) == 1 else pc.binary_join_element_wise(*cols, self.delimiter)
        lines = pc.binary_join_element_wise(joined, pa.scalar(""), "\n")  # each row + "\n"
        if isinstance(lines, pa.ChunkedArray):
            lines = lines.combine_chunks()
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)[lines.offset : lines.offset + len(lines) + 1]
        data = memoryview(lines.buffers()[2])[int(offsets[0]) : int(offsets[-1])]
        self._fh.write(data)
        self.rows += table.num_rows

    def close(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()

    def abort(self) -> None:
        self._fh.close()


class ParquetWriter(TableWriter):
    def __init__(self, path, names):
        super().__init__(path, names)
        self._writer = None

    def write(self, table) -> None:
        import pyarrow.parquet as pq

        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, table.schema)
        self._writer.write_table(table)
        self.rows += table.num_rows

    def close(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self._writer is None:  # no rows: an empty file with text columns
            schema = pa.schema([(n, pa.string()) for n in self.names])
            self._writer = pq.ParquetWriter(self.path, schema)
        self._writer.close()

    def abort(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:
                pass


def _text_rows(table):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pt

    cols = []
    for c in table.columns:
        if isinstance(c, pa.ChunkedArray):
            c = c.combine_chunks()
        if pt.is_dictionary(c.type):
            c = c.dictionary.take(c.indices)
        cols.append(pc.cast(c, pa.string()).to_pylist())
    return cols


class XlsxWriter(TableWriter):
    def __init__(self, path, names):
        super().__init__(path, names)
        import openpyxl

        self._book = openpyxl.Workbook(write_only=True)
        self._sheet = self._book.create_sheet("release")
        self._sheet.append(self.names)

    def write(self, table) -> None:
        if self.rows + table.num_rows > XLSX_MAX_ROWS:
            raise InputError(
                f"an Excel sheet holds at most {XLSX_MAX_ROWS:,} data rows; write the release as csv or parquet"
            )
        for row in zip(*_text_rows(table), strict=True):
            self._sheet.append(list(row))
        self.rows += table.num_rows

    def close(self) -> None:
        self._book.save(self.path)

    def abort(self) -> None:
        try:
            self._sheet.close()
        except Exception:
            pass


class StatWriter(TableWriter):
    """SPSS .sav / Stata .dta via pyreadstat (text variables; the whole release is held in memory)."""

    def __init__(self, path, names, fmt: str):
        check_stat_names(fmt, names)  # perturb_file checks before any work; this guards every other caller
        super().__init__(path, names)
        self.format = fmt
        self._parts: list = []

    def write(self, table) -> None:
        import pandas as pd

        cols = _text_rows(table)
        self._parts.append(pd.DataFrame(dict(zip(self.names, cols, strict=True)), dtype=object))
        self.rows += table.num_rows

    def close(self) -> None:
        import pandas as pd
        import pyreadstat

        frame = pd.concat(self._parts, ignore_index=True) if self._parts else pd.DataFrame(columns=self.names)
        frame = frame.fillna("")
        try:
            if self.format == "sav":
                pyreadstat.write_sav(frame, self.path)
            else:
                pyreadstat.write_dta(frame, self.path)
        except OSError:
            raise
        except Exception as exc:
            raise InputError(f"could not write {self.format} file: {str(exc).splitlines()[0][:160]}") from None


def open_writer(fmt: str, path, names: list[str], delimiter: str = ",", bom: bool = False) -> TableWriter:
    if fmt == "csv":
        return CsvWriter(path, names, delimiter=delimiter, bom=bom)
    if fmt == "parquet":
        return ParquetWriter(path, names)
    if fmt == "xlsx":
        return XlsxWriter(path, names)
    if fmt in ("sav", "dta"):
        return StatWriter(path, names, fmt)
    raise InputError(f"unknown output format {fmt!r}; choose csv, parquet, xlsx, sav or dta")
