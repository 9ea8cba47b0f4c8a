"""Guessing how a delimited text file is written: encoding, delimiter and decimal mark.

Encoding: a byte-order mark decides (UTF-8 with BOM, UTF-16); otherwise UTF-8 if every sample decodes
strictly, or if the sampled lines holding valid non-ASCII UTF-8 outnumber the lines that are not valid UTF-8
(a UTF-8 file with a few rows in another encoding: the reader then refuses the first invalid row, rather
than reading every accented value as mojibake); else Windows-1252 if it decodes (a cp1252 file with a few
mojibake rows such as "CafÃ©", whose bytes happen to be valid UTF-8, stays cp1252), else Latin-1 (which
decodes any byte). Samples: the first SAMPLE_BYTES plus WINDOWS disjoint windows spread over the rest of the
file (the last one ending at the end), each cut to whole lines, so a non-UTF-8 byte far from the start is
usually noticed; one that is missed gives a clear read error later. A head read as UTF-8 with a line in
another encoding is refused with that line (mixed_utf8_line); NUL bytes without a byte-order mark mean a
binary file. Delimiter: a first line ``sep=X`` (Excel's delimiter hint: "sep=" in any case and one character,
alone on the line, after a byte-order mark if any) names it and is neither header nor data (:func:`sep_line`);
otherwise the candidate that splits the sampled lines into the same number (> 1) of fields most consistently
(when no candidate splits the first line and that line reads like a title, two or more words, the lines below it
decide if they start with a header row, so that the header's error can point to that row; a one-column file whose
header is one word stays one column even when its values hold a delimiter). Lines above the header (the ``sep=``
line, then ``skip_rows`` lines) are physical lines, blank ones included, each ended by CR LF, CR or LF: as pyarrow's
``skip_rows`` counts them. Decimal mark: "," when the delimiter is not "," and numbers written like 1,5 outnumber
numbers written like 1.5 (ASCII digits only).
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re

SAMPLE_BYTES = 1 << 20
WINDOWS = 8
WINDOW_BYTES = 64 << 10
DELIMITERS = (",", ";", "\t", "|")
#: Title lines at most that :func:`guess_delimiter` looks past when the first line has a single field.
TITLE_LINES = 10
#: Words a first line without a delimiter needs to be taken for a title (:func:`guess_delimiter`).
TITLE_WORDS = 2
_SEP_LINE = re.compile(r"sep=(.)", re.IGNORECASE | re.DOTALL)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_COMMA_NUMBER = re.compile(r"[+-]?[0-9]+,[0-9]+")  # ASCII digits only, as the release's number rule
_DOT_NUMBER = re.compile(r"[+-]?[0-9]+\.[0-9]+")
_NUMBER = re.compile(r"[+-]?[0-9]+(?:[.,][0-9]+)?")

BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def read_samples(path) -> tuple[bytes, list[bytes]]:
    """The head of the file (its last line possibly cut when the file is longer) and a few disjoint windows
    from the rest, each holding whole lines only: a window's partial first line and (unless the window ends at
    the end of the file) partial last line are dropped, so a line is never judged by a fragment."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(SAMPLE_BYTES)
        windows = []
        if size > SAMPLE_BYTES:
            last = max(SAMPLE_BYTES, size - WINDOW_BYTES)  # the final window ends at the end of the file
            end = SAMPLE_BYTES
            for i in range(WINDOWS):
                start = max(end, SAMPLE_BYTES + (last - SAMPLE_BYTES) * i // (WINDOWS - 1))
                if start >= size:
                    break
                fh.seek(start)
                data = fh.read(WINDOW_BYTES if i < WINDOWS - 1 else size - start)
                end = start + len(data)
                windows.append(_whole_lines(data, end >= size))
    return head, windows


def _whole_lines(window: bytes, at_end: bool) -> bytes:
    """``window`` without its first line (it starts inside a line, or just after one) and, unless the window
    ends at the end of the file, without the bytes after its last line break."""
    first = window.find(b"\n")
    if first < 0:
        return b""  # inside one long line
    body = window[first + 1 :]
    if not at_end:
        body = body[: body.rfind(b"\n") + 1]
    return body


def bom_encoding(head: bytes) -> str | None:
    for bom, name in BOMS:
        if head.startswith(bom):
            return name
    return None


def _decodes(data: bytes, encoding: str) -> bool:
    """Strict decode; an incomplete character at the very end (a cut head) is allowed."""
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    try:
        decoder.decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _complete(lines: list, head: bytes) -> list:
    """``lines`` (of ``head``, bytes or decoded) without the last one when it may be cut: the head filled
    SAMPLE_BYTES (the file goes on) and other lines precede it."""
    return lines[:-1] if len(head) >= SAMPLE_BYTES and len(lines) > 1 else lines


def _utf8_line(raw: bytes) -> bool | None:
    """The UTF-8 rule of one line: None when it is ASCII (no evidence either way), True when it is valid
    non-ASCII UTF-8, False when it is not valid UTF-8."""
    if raw.isascii():
        return None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def utf8_evidence(head: bytes, windows: list[bytes]) -> tuple[int, int]:
    """(lines holding valid non-ASCII UTF-8, lines that are not valid UTF-8) over the head's complete lines and
    the windows' lines (whole lines, as :func:`read_samples` cuts them), by :func:`_utf8_line`."""
    samples = (_complete(head.split(b"\n"), head), *(w.split(b"\n") for w in windows))
    kinds = [_utf8_line(raw) for lines in samples for raw in lines]
    return kinds.count(True), kinds.count(False)


def guess_encoding(head: bytes, windows: list[bytes]) -> str:
    """The BOM's encoding; else UTF-8 when every sample decodes as UTF-8, or when the sampled lines of valid
    non-ASCII UTF-8 outnumber those that are not valid UTF-8 (then the invalid bytes are a read error naming
    their row, never a silent cp1252 reading of the whole file); else cp1252 when it decodes every sample (a few
    lines of cp1252 text can be valid UTF-8 by chance, e.g. the mojibake "CafÃ©"); else Latin-1."""
    bom = bom_encoding(head)
    if bom:
        return bom
    if _decodes(head, "utf-8") and all(_decodes(w, "utf-8") for w in windows):
        return "utf-8"
    valid, invalid = utf8_evidence(head, windows)
    if valid > invalid:
        return "utf-8"
    if _decodes(head, "cp1252") and all(_decodes(w, "cp1252") for w in windows):
        return "cp1252"
    return "latin-1"


def mixed_utf8_line(head: bytes) -> int | None:
    """Line number (1-based) of the first line of ``head`` that is not valid UTF-8 when another line holds valid
    non-ASCII UTF-8: in a file guessed to be UTF-8, a line in another encoding, which no single encoding reads
    correctly (call it only when :func:`guess_encoding` said UTF-8)."""
    first_bad, utf8_text = None, False
    for number, raw in enumerate(_complete(head.split(b"\n"), head), 1):
        kind = _utf8_line(raw)
        if kind is True:
            utf8_text = True
        elif kind is False:
            first_bad = first_bad or number
        if first_bad and utf8_text:
            return first_bad
    return None


def looks_binary(head: bytes) -> bool:
    """NUL bytes without a UTF-16/32 byte-order mark: not a text file."""
    return b"\x00" in head and bom_encoding(head) is None


def wide_encoding(encoding: str) -> bool:
    """True for UTF-16 and UTF-32 (any byte order), whose text holds NUL bytes; False for any other encoding."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return False
    return name.startswith(("utf-16", "utf-32"))


def utf16_without_bom(head: bytes) -> str | None:
    """The encoding ("utf-16-le" or "utf-16-be") of a ``head`` without a byte-order mark that looks like UTF-16
    text: in nearly all of its first byte pairs one byte is NUL and the other printable ASCII or a line break, the
    NUL always on the same side. None otherwise (a binary file)."""
    pairs = head[:4096]
    pairs = pairs[: len(pairs) - len(pairs) % 2]
    if bom_encoding(head) is not None or len(pairs) < 4:
        return None
    low, high = pairs[0::2], pairs[1::2]
    for text, nul, name in ((low, high, "utf-16-le"), (high, low, "utf-16-be")):
        ascii_text = sum(1 for b in text if 32 <= b < 127 or b in (9, 10, 13))
        if nul.count(0) >= 0.9 * len(nul) and ascii_text >= 0.9 * len(text):
            return name
    return None


def head_text(head: bytes, encoding: str) -> str:
    """The head decoded (undecodable bytes replaced), without a byte-order mark."""
    text = head.decode(encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def sep_line(head: bytes, encoding: str) -> str | None:
    """The delimiter named by a first line ``sep=X`` (Excel's delimiter hint: "sep=" in any case and exactly one
    character, alone on the line, after a byte-order mark if any); None when the first line is anything else."""
    first = _LINE_BREAK.split(head_text(head[:256], encoding), maxsplit=1)[0]
    m = _SEP_LINE.fullmatch(first)
    return m.group(1) if m else None


def lines_above_header(head: bytes, encoding: str, skip_rows: int | None) -> int:
    """Physical lines before the header: the ``sep=`` line if any, then ``skip_rows`` lines."""
    return (1 if sep_line(head, encoding) is not None else 0) + int(skip_rows or 0)


def drop_lines(text: str, count: int) -> str:
    """``text`` without its first ``count`` physical lines (blank ones included; CR LF, CR and LF each end
    one)."""
    if count <= 0:
        return text
    parts = _LINE_BREAK.split(text, maxsplit=count)
    return parts[count] if len(parts) > count else ""


def sample_lines(head: bytes, encoding: str, max_lines: int = 200, skip: int = 0) -> list[str]:
    """Complete non-blank lines of the head from its header (``skip`` physical lines above it are left out; the
    last, possibly cut, line is dropped when more follow)."""
    lines = _complete(drop_lines(head_text(head, encoding), skip).splitlines(), head)
    return [ln for ln in lines[:max_lines] if ln.strip()]


def guess_delimiter(lines: list[str], default: str = ",") -> str:
    """The delimiter giving the most lines with the header's field count (> 1 fields), quotes respected. When no
    candidate splits the first line: if that line reads like a title (:func:`_title_like`), the delimiter that
    splits the first of the next TITLE_LINES lines into a header row (:func:`_header_like`) when at least 90% of
    the lines from it on have its field count; else ``default`` (a one-column file whose values hold ";" is read
    as one column)."""
    best, _ = _best_delimiter(lines)
    if best is not None:
        return best
    if lines and _title_like(lines[0]):
        for start in range(1, max(0, min(TITLE_LINES, len(lines) - 2)) + 1):
            best, share = _best_delimiter(lines[start:])
            if best is not None and share >= 0.9 and _header_like(lines[start], best):
                return best
    return default


def _title_like(line: str) -> bool:
    """Whether a line without a delimiter reads like a title rather than one column's name: words of prose
    (at least TITLE_WORDS, separated by white space)."""
    return len(line.split()) >= TITLE_WORDS


def _header_like(line: str, delimiter: str) -> bool:
    """Whether ``line`` split by ``delimiter`` looks like a header row: distinct names, none blank or a number."""
    cells = [c.strip() for c in next(csv.reader([line], delimiter=delimiter), [])]
    return len(set(cells)) == len(cells) and all(c and not _NUMBER.fullmatch(c) for c in cells)


def _best_delimiter(lines: list[str]) -> tuple[str | None, float]:
    """(the candidate giving the most lines with the first line's field count (> 1), the share of such lines);
    (None, 0) when no candidate splits the first line."""
    best, best_score, share = None, -1.0, 0.0
    for delim in DELIMITERS:
        try:
            rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=delim))
        except csv.Error:
            continue
        if not rows or len(rows[0]) < 2:
            continue
        width = len(rows[0])
        same = sum(1 for r in rows if len(r) == width) / len(rows)
        score = same + 0.01 * min(width, 50)
        if score > best_score:
            best, best_score, share = delim, score, same
    return best, share


def guess_decimal(lines: list[str], delimiter: str) -> str:
    if delimiter == ",":
        return "."
    comma = dot = 0
    for row in csv.reader(io.StringIO("\n".join(lines[1:])), delimiter=delimiter):
        for cell in row:
            cell = cell.strip()
            if _COMMA_NUMBER.fullmatch(cell):
                comma += 1
            elif _DOT_NUMBER.fullmatch(cell):
                dot += 1
    return "," if comma > dot else "."
