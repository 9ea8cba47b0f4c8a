"""Delimited text (CSV, TSV, TXT) streamed with pyarrow's CSV reader, every column read as text.

Quoted fields (with delimiters, doubled quotes or line breaks inside) follow RFC 4180. Only empty or blank
(white space only) cells are missing values; texts such as "NA" or "?" stay as they are. Rows whose every cell
is missing (";;" rows of a spreadsheet export) are no records: they are skipped and counted
(``empty_rows_skipped``), as blank lines are skipped (those uncounted). Rows with more or fewer fields than the
header, bytes that are not valid in the encoding, and duplicate or empty column names are one-line errors.

Lines above the header (``header_line``: a first line ``sep=X``, then ``options.skip_rows`` lines, blank ones
included) are neither header nor data; pyarrow skips them (``ReadOptions.skip_rows``) and every error still names
the file's own line numbers. A header that looks like a title line (far fewer fields than the lines below, or
mostly empty names) gets an error suggesting --skip-rows.

Reading a few columns of a wide file converts only those (:func:`empty_records` finds the empty rows over all
columns with a byte scan, when every line of the file is one record); otherwise every column is converted.
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
from .source_base import Source, blank_to_null, check_names, is_blank, skip_rows_hint

#: Bytes pyarrow parses per block (at least; blocks hold at least 8 rows of the file's typical size). The
#: streaming reader reads about 32 blocks ahead, so this bounds its memory.
BLOCK_BYTES = 1 << 20
_NATIVE_UTF8 = {"utf-8", "utf8", "utf-8-sig", "utf_8", "utf_8_sig"}
_FIELDS = re.compile(r"Expected (\d+) columns, got (\d+)")
#: Bytes the empty-row scan reads at a time.
SCAN_BYTES = 8 << 20
_ASCII_COMPATIBLE = ("utf-8", "utf8", "utf_8", "utf-8-sig", "utf_8_sig", "cp1252", "latin-1", "latin_1", "iso8859-1")


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
        #: physical lines above the header: the sep= line, then skip_rows
        self.header_line = sniff.lines_above_header(head, options.encoding or "utf-8", options.skip_rows)
        header = self._header(head)
        #: the head's layout (:meth:`_layout`), kept for the --skip-rows hint of a later error (no second read)
        self._head_layout = self._layout(head)
        try:
            self.names = check_names(header, self.path)
        except InputError as exc:
            raise InputError(f"{exc}{self._skip_rows_hint(self._head_layout)}") from None
        self._check_header_width()
        self.bytes_per_row = self._bytes_per_row(head)
        self._stream = None
        self._empty = _UNKNOWN  # empty_records(): not yet scanned
        self._records = 0

    def _head_rows(self, head: bytes):
        """A csv reader over the head without the ``header_line`` lines above the header (blank lines may precede
        it, as in the fast reader); its ``line_num`` plus ``header_line`` is a line number of the file."""
        text = sniff.drop_lines(sniff.head_text(head, self.options.encoding or "utf-8"), self.header_line)
        # newline="": line breaks as the csv module expects them, bare carriage returns (old Mac files) included
        return csv.reader(io.StringIO(text, newline=""), delimiter=self.options.delimiter or ",")

    def _header(self, head: bytes) -> list[str]:
        try:
            row = next((r for r in self._head_rows(head) if r), None)  # (blank lines before it are skipped)
        except csv.Error as exc:
            raise InputError(f"{self.base}: could not read the header row ({exc})") from None
        if not row or not any(cell.strip() for cell in row):
            where = "the first line" if not self.header_line else f"the line after the {self.header_line} skipped"
            raise InputError(f"{self.base} has no header row; {where} must name the columns")
        return row

    def _layout(self, head: bytes) -> tuple[list[str], int, int | None]:
        """(the header row, the field count shared by at least 90% of the (at least 2) sampled lines below it (0
        when none is), the file's line number of the first of those lines whose every cell is filled (None when
        none is)): the shape of a file whose header may be a title line. ``([], 0, None)`` when unparsable."""
        try:
            rows = [(r, n) for r, n in _numbered(self._head_rows(head), 200) if r]
        except csv.Error:
            return [], 0, None
        header, below = rows[0][0] if rows else [], rows[1:]
        widths = [len(r) for r, _ in below]
        common = max(set(widths), key=widths.count) if widths else 0
        if len(below) < 2 or widths.count(common) < 0.9 * len(below) or common < 2:
            return header, 0, None
        full = next((n for r, n in below if len(r) == common and all(cell.strip() for cell in r)), None)
        return header, common, None if full is None else self.header_line + full

    def _skip_rows_hint(self, layout: tuple) -> str:
        """A suggestion of --skip-rows when the header looks like a title line (fewer fields than most lines below
        it, or at least half of its names empty) and a line below looks like the header (``layout``: that of
        :meth:`_layout`); empty otherwise."""
        header, common, line = layout
        unnamed = sum(1 for cell in header if not cell.strip())
        if line is None or (common <= len(header) and unnamed * 2 < len(header)):
            return ""
        sep = self.header_line - int(self.options.skip_rows or 0)
        return skip_rows_hint("line", line, line - 1 - sep)

    def _check_header_width(self) -> None:
        """Refuse a header with fewer fields than nearly all the sampled lines below it (each such line would be
        a ragged row) when one of them looks like the real header, suggesting --skip-rows."""
        layout = self._head_layout
        hint = self._skip_rows_hint(layout) if len(self.names) < layout[1] else ""
        if hint:
            raise InputError(
                f"{self.base}: the header row names {len(self.names)} column(s) but the lines below it have "
                f"{layout[1]} fields (ragged rows){hint}"
            )

    def _bytes_per_row(self, head: bytes) -> float:
        lines = head.count(b"\n") or head.count(b"\r")  # (lines that end in a bare carriage return: old Mac files)
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
        read = pcsv.ReadOptions(
            encoding=arrow_encoding(self.encoding), block_size=block, use_threads=True, skip_rows=self.header_line
        )
        parse = pcsv.ParseOptions(delimiter=self.options.delimiter or ",", newlines_in_values=True)
        convert = pcsv.ConvertOptions(
            column_types={n: pa.string() for n in self.names},
            strings_can_be_null=True,
            null_values=[""],
            quoted_strings_can_be_null=True,
            include_columns=columns or [],
        )
        self._stream = pa.OSFile(self.path, "r")
        return pcsv.open_csv(self._stream, read_options=read, parse_options=parse, convert_options=convert)

    def _tables(self, columns):
        """Batches of the chosen columns, blank cells missing, without the rows whose every cell (in all columns,
        not only the chosen ones, so that every pass agrees on the records) is missing; those are counted in
        ``empty_rows_skipped``. With a known list of empty rows (:meth:`empty_records`) only the chosen columns
        are converted; else all are."""
        import pyarrow as pa

        rows = 0
        try:
            # the byte scan only pays when fewer than all columns are converted (all of them show their empty rows)
            few = bool(columns) and len(set(columns)) == len(columns) < len(self.names)
            empty = self.empty_records() if few else None
            chosen = (columns or self.names) if empty is not None else self.names
            reader = self._reader(chosen)
            if [f.name for f in reader.schema] != chosen:
                raise InputError(f"{self.base}: the header row could not be read consistently; check --delimiter")
            for batch in reader:
                start, rows = rows, rows + batch.num_rows
                cells = [blank_to_null(c, empty_is_null=True) for c in batch.columns]
                batch = pa.RecordBatch.from_arrays(cells, names=batch.schema.names)
                if empty is None:
                    yield self._drop_empty_rows(batch, columns)
                else:
                    yield self._drop_rows(batch, empty, start)
            if empty is not None and rows != self._records:
                raise InputError(
                    f"{self.base}: the rows could not be counted consistently ({rows:,} read, {self._records:,} "
                    "lines); check --delimiter and the quoting"
                )
        except (pa.ArrowInvalid, UnicodeDecodeError, OSError) as exc:
            raise self._error(exc, rows) from None
        finally:
            if self._stream is not None:
                self._stream.close()

    def _drop_empty_rows(self, batch, columns):
        """``batch`` (all columns) without its rows of missing cells only, which are added to
        ``empty_rows_skipped``; then the chosen columns."""
        import pyarrow.compute as pc

        chosen = batch.select(columns) if columns else batch
        if batch.num_rows == 0 or min(col.null_count for col in batch.columns) == 0:
            return chosen  # some column has no missing cell: no row is empty
        filled = pc.is_valid(batch.column(0))
        for col in batch.columns[1:]:
            filled = pc.or_(filled, pc.is_valid(col))
        skipped = batch.num_rows - (pc.sum(filled).as_py() or 0)
        if not skipped:
            return chosen
        self.empty_rows_skipped += skipped
        return chosen.filter(filled)

    def _drop_rows(self, batch, empty, start: int):
        """``batch`` (rows ``start``... of the file's records) without the records listed in ``empty``."""
        import numpy as np

        lo, hi = np.searchsorted(empty, [start, start + batch.num_rows])
        if lo == hi:
            return batch
        keep = np.ones(batch.num_rows, dtype=bool)
        keep[empty[lo:hi] - start] = False
        self.empty_rows_skipped += int(hi - lo)
        return batch.filter(keep)

    def empty_records(self):
        """Sorted record numbers (0 = first data row) of the rows whose every cell is blank, found by a byte scan
        (cached); None when the scan cannot map lines to records (a quote left open at a line's end, a bare
        carriage return, an encoding that is not ASCII-compatible): then every column must be converted."""
        if self._empty is _UNKNOWN:
            found = empty_records(self.path, self.encoding, self.options.delimiter or ",", self.header_line)
            self._empty, self._records = found if found is not None else (None, 0)
        return self._empty

    def locate_bad_row(self) -> BadRow | None:
        """The first row the fast reader rejects, found by a slow pass with Python's csv module (only after an
        error: pyarrow reads ahead in parallel blocks and cannot say which row failed). None for UTF-16/32."""
        if self.encoding.startswith(("utf-16", "utf-32", "utf_16", "utf_32")):
            return None
        width = len(self.names)
        first_bad_line = 0

        def lines(fh):
            nonlocal first_bad_line
            for number, raw in enumerate(_physical_lines(fh), 1):
                if number <= self.header_line:
                    continue  # above the header
                try:
                    yield raw.decode(self.encoding)
                except UnicodeDecodeError:
                    first_bad_line = first_bad_line or number
                    yield raw.decode(self.encoding, errors="replace")

        with open(self.path, "rb") as fh:
            reader = csv.reader(lines(fh), delimiter=self.options.delimiter or ",")
            above = self.header_line
            data_row = 0
            try:
                next((row for row in reader if row), None)  # the header (after any blank lines)
                for row in reader:
                    if first_bad_line:
                        return BadRow(data_row + 1, first_bad_line, "encoding", 0)
                    if not row:
                        continue  # blank lines are skipped, as the fast reader does
                    data_row += 1
                    if len(row) != width:
                        return BadRow(data_row, above + reader.line_num, "fields", len(row))
            except csv.Error:
                return BadRow(data_row + 1, above + reader.line_num, "syntax", 0)
        return None

    def _error(self, exc: Exception, rows: int) -> InputError:
        msg = str(exc)
        m = _FIELDS.search(msg)
        decoding = isinstance(exc, UnicodeDecodeError) or "UTF8" in msg or "decode" in msg.lower()
        bad = self.locate_bad_row() if (m or decoding) else None
        where = bad.where() if bad is not None else f"at or after data row {rows + 1}"
        hint = self._skip_rows_hint(self._head_layout) if m or bad is not None else ""
        if bad is not None and bad.kind == "fields":
            return InputError(
                f"{self.base}: the row {where} has {bad.fields} fields but the header has {len(self.names)} "
                f"(ragged rows); fix that row, or give the right --delimiter{hint}"
            )
        if m:
            return InputError(
                f"{self.base}: a row {where} has {m.group(2)} fields but the header has {m.group(1)} "
                f"(ragged rows); fix that row, or give the right --delimiter{hint}"
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


def _numbered(reader, limit: int):
    """Up to ``limit`` rows of a csv reader, each with the reader's line number after it."""
    for _, row in zip(range(limit), reader, strict=False):
        yield row, reader.line_num


def _physical_lines(fh):
    """The lines of a binary file, each with its line break: "\\n", "\\r\\n" or a bare "\\r" (old Mac files)."""
    for raw in fh:
        if b"\r" not in raw[:-2]:
            yield raw
            continue
        yield from re.findall(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", raw)


_UNKNOWN = object()
_QUOTE_NL = bytes(b for b in range(256) if b not in b'"\n')


def empty_records(path, encoding: str, delimiter: str, header_line: int = 0):
    """(sorted record numbers of the rows whose every cell is blank, number of records) of a delimited file, by
    a byte scan: each line after the header (the first line after the ``header_line`` lines above it, which are
    ignored) is one record, blank lines (empty, or a lone carriage return) none. None when that does not hold or
    cannot be told cheaply: an encoding that is not ASCII-compatible, a line with an odd number of quotes (a
    quoted line break may follow), a carriage return not followed by a line break. A line holding only the
    delimiter, quotes, white space or non-ASCII bytes is parsed to check its cells with
    :func:`~.source_base.blank_to_null`, as the reader judges them."""
    import numpy as np

    if codecs.lookup(encoding).name not in {codecs.lookup(e).name for e in _ASCII_COMPATIBLE}:
        return None
    sep = delimiter.encode(encoding)
    if len(sep) != 1 or delimiter in "\r\n":
        return None
    filler = sep + b'" \t\r\x0b\x0c\x1c\x1d\x1e\x1f' + bytes(range(0x80, 0x100))
    only_filler = re.compile(b"\n[" + re.escape(filler) + b"]*(?=\n)")  # a line of filler bytes (or blank)
    found: list[int] = []
    lines = blanks = 0  # lines before this block (the header included) and blank lines among them
    with open(path, "rb") as fh:
        while True:
            block = fh.read(SCAN_BYTES)
            if not block:
                break
            block += fh.readline()  # whole lines
            if not block.endswith(b"\n"):
                block += b"\n"  # the last line, without its line break
            if b"\r" in block and block.count(b"\r") != block.count(b"\r\n"):
                return None
            if b'"' in block:
                marks = np.frombuffer(block.translate(None, _QUOTE_NL), dtype=np.uint8)
                if np.any(np.diff(np.flatnonzero(marks == 10), prepend=-1) % 2 == 0):
                    return None  # a line with an odd number of quotes
            first = block[: block.index(b"\n")]
            hits = [(0, first)] if not first.translate(None, filler) else []
            hits += [(m.start() + 1, m.group()[1:]) for m in only_filler.finditer(block)]
            seen = counted = 0  # line breaks of the block before position ``seen``
            for at, line in hits:  # ``line`` starts at ``at``
                counted += block.count(b"\n", seen, at)
                seen = at
                index = lines + counted  # (0-based) line of the file
                if index < header_line:
                    continue  # above the header
                if line in (b"", b"\r"):
                    blanks += 1
                elif index > header_line and _blank_line(line, encoding, delimiter):  # (not the header)
                    found.append(index - header_line - 1 - blanks)
            lines += counted + block.count(b"\n", seen)
    return np.asarray(found, dtype=np.int64), max(0, lines - header_line - 1 - blanks)


def _blank_line(line: bytes, encoding: str, delimiter: str) -> bool:
    """Whether every cell of one line is blank (:func:`.source_base.is_blank`)."""
    cells = next(csv.reader([line.decode(encoding, errors="replace")], delimiter=delimiter), [])
    return all(is_blank(c) for c in cells)
