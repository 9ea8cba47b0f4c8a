"""Delimited text (CSV, TSV, TXT) streamed with pyarrow's CSV reader, every column read as text.

Quoted fields (with delimiters, doubled quotes or line breaks inside) follow RFC 4180. Only empty cells are
missing values; texts such as "NA" or "?" stay as they are. Rows whose every cell is empty (";;" rows of a
spreadsheet export) are no records: they are skipped and counted (``empty_rows_skipped``), as blank lines are
skipped (those uncounted). Rows with more or fewer fields than the header, bytes that are not valid in the
encoding, and duplicate or empty column names are one-line errors.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
from dataclasses import dataclass

from ..errors import InputError
from . import sniff
from .source_base import Source, check_names

#: Bytes pyarrow parses per block (at least; blocks hold at least 8 rows of the file's typical size). The
#: streaming reader reads about 32 blocks ahead, so this bounds its memory.
BLOCK_BYTES = 1 << 20
_NATIVE_UTF8 = {"utf-8", "utf8", "utf-8-sig", "utf_8", "utf_8_sig"}
_FIELDS = re.compile(r"Expected (\d+) columns, got (\d+)")


def check_encoding(name: str) -> str:
    try:
        return codecs.lookup(name).name
    except LookupError:
        raise InputError(f"unknown text encoding {name!r}; try utf-8, cp1252 or latin-1") from None


def arrow_encoding(encoding: str) -> str:
    """pyarrow decodes UTF-8 natively (and skips a UTF-8 byte-order mark); others go through Python codecs."""
    return "utf8" if encoding.lower().replace("_", "-") in _NATIVE_UTF8 else encoding


@dataclass
class BadRow:
    """Where a delimited file goes wrong: data row (1 = first after the header), physical line, what."""

    data_row: int
    line: int
    kind: str  # "fields", "encoding" or "syntax"
    fields: int

    def where(self) -> str:
        return f"at data row {self.data_row:,} (line {self.line:,} of the file)"


class CsvSource(Source):
    format = "csv"

    def __init__(self, path, options):
        super().__init__(path, options)
        self.base = os.path.basename(self.path)
        self.size = os.path.getsize(self.path)
        head, _ = sniff.read_samples(self.path) if self.size else (b"", [])
        self.encoding = check_encoding(options.encoding) if options.encoding else "utf-8"
        if self.size == 0 or not head.strip() or head.strip() in (codecs.BOM_UTF8, codecs.BOM_UTF16_LE):
            raise InputError(f"{self.base} is empty; choose a file with a header row and data rows")
        self.names = check_names(self._header(head), self.path)
        self.bytes_per_row = self._bytes_per_row(head)
        self._stream = None

    def _header(self, head: bytes) -> list[str]:
        text = head.decode(self.options.encoding or "utf-8", errors="replace")
        if text.startswith("\ufeff"):
            text = text[1:]
        try:
            row = next(csv.reader(io.StringIO(text), delimiter=self.options.delimiter or ","), None)
        except csv.Error as exc:
            raise InputError(f"{self.base}: could not read the header row ({exc})") from None
        if not row or not any(cell.strip() for cell in row):
            raise InputError(f"{self.base} has no header row; the first line must name the columns")
        return row

    def _bytes_per_row(self, head: bytes) -> float:
        lines = head.count(b"\n")
        return len(head) / max(1, lines)

    def estimated_rows(self) -> int:
        return max(1, int(self.size / self.bytes_per_row))

    def fraction_done(self) -> float:
        try:
            return min(1.0, self._stream.tell() / max(1, self.size)) if self._stream is not None else 0.0
        except Exception:
            return 1.0

    def _reader(self, columns):
        import pyarrow as pa
        import pyarrow.csv as pcsv

        block = max(BLOCK_BYTES, int(8 * self.bytes_per_row))
        read = pcsv.ReadOptions(encoding=arrow_encoding(self.encoding), block_size=block, use_threads=True)
        parse = pcsv.ParseOptions(delimiter=self.options.delimiter or ",", newlines_in_values=True)
        convert = pcsv.ConvertOptions(
            column_types={n: pa.string() for n in self.names},
            strings_can_be_null=True,
            null_values=[""],
            quoted_strings_can_be_null=True,
        )
        self._stream = pa.OSFile(self.path, "r")
        return pcsv.open_csv(self._stream, read_options=read, parse_options=parse, convert_options=convert)

    def _tables(self, columns):
        """Batches of the chosen columns without the rows whose every cell (in all columns, not only the chosen
        ones, so that every pass agrees on the records) is empty; those are counted in ``empty_rows_skipped``."""
        import pyarrow as pa

        rows = 0
        try:
            reader = self._reader(columns)
            if [f.name for f in reader.schema] != self.names:
                raise InputError(f"{self.base}: the header row could not be read consistently; check --delimiter")
            for batch in reader:
                rows += batch.num_rows
                batch = self._drop_empty_rows(batch)
                yield batch.select(columns) if columns else batch
        except (pa.ArrowInvalid, UnicodeDecodeError, OSError) as exc:
            raise self._error(exc, rows) from None
        finally:
            if self._stream is not None:
                self._stream.close()

    def _drop_empty_rows(self, batch):
        """``batch`` without its rows of empty cells only, which are added to ``empty_rows_skipped``."""
        import pyarrow.compute as pc

        if batch.num_rows == 0 or min(col.null_count for col in batch.columns) == 0:
            return batch  # some column has no empty cell: no row is empty
        empty = pc.is_null(batch.column(0))
        for col in batch.columns[1:]:
            empty = pc.and_(empty, pc.is_null(col))
        skipped = pc.sum(empty).as_py() or 0
        if not skipped:
            return batch
        self.empty_rows_skipped += skipped
        return batch.filter(pc.invert(empty))

    def locate_bad_row(self) -> BadRow | None:
        """The first row the fast reader rejects, found by a slow pass with Python's csv module (only after an
        error: pyarrow reads ahead in parallel blocks and cannot say which row failed). None for UTF-16/32."""
        if self.encoding.startswith(("utf-16", "utf-32", "utf_16", "utf_32")):
            return None
        width = len(self.names)
        first_bad_line = 0

        def lines(fh):
            nonlocal first_bad_line
            for number, raw in enumerate(fh, 1):
                try:
                    yield raw.decode(self.encoding)
                except UnicodeDecodeError:
                    first_bad_line = first_bad_line or number
                    yield raw.decode(self.encoding, errors="replace")

        with open(self.path, "rb") as fh:
            reader = csv.reader(lines(fh), delimiter=self.options.delimiter or ",")
            next(reader, None)  # the header
            data_row = 0
            try:
                for row in reader:
                    if first_bad_line:
                        return BadRow(data_row + 1, first_bad_line, "encoding", 0)
                    if not row:
                        continue  # blank lines are skipped, as the fast reader does
                    data_row += 1
                    if len(row) != width:
                        return BadRow(data_row, reader.line_num, "fields", len(row))
            except csv.Error:
                return BadRow(data_row + 1, reader.line_num, "syntax", 0)
        return None

    def _error(self, exc: Exception, rows: int) -> InputError:
        msg = str(exc)
        m = _FIELDS.search(msg)
        decoding = isinstance(exc, UnicodeDecodeError) or "UTF8" in msg or "decode" in msg.lower()
        bad = self.locate_bad_row() if (m or decoding) else None
        where = bad.where() if bad is not None else f"at or after data row {rows + 1}"
        if bad is not None and bad.kind == "fields":
            return InputError(
                f"{self.base}: the row {where} has {bad.fields} fields but the header has {len(self.names)} "
                "(ragged rows); fix that row, or give the right --delimiter"
            )
        if m:
            return InputError(
                f"{self.base}: a row {where} has {m.group(2)} fields but the header has {m.group(1)} "
                "(ragged rows); fix that row, or give the right --delimiter"
            )
        if decoding:
            return InputError(
                f"{self.base}: bytes {where} are not valid {self.encoding} text; "
                "give the file's encoding with --encoding (for example cp1252 or latin-1)"
            )
        if isinstance(exc, OSError) and not msg.startswith("CSV"):
            return InputError(f"{self.base}: could not be read ({exc.__class__.__name__}: {msg.splitlines()[0]})")
        first = msg.splitlines()[0] if msg else exc.__class__.__name__
        return InputError(f"{self.base}: could not be read as delimited text {where}: {first[:160]}")
