"""Guessing how a delimited text file is written: encoding, delimiter and decimal mark.

Encoding: a byte-order mark decides (UTF-8 with BOM, UTF-16); otherwise UTF-8 if every sampled window
decodes strictly or if any sampled line holds non-ASCII text that is valid UTF-8 (a UTF-8 file with a few
rows in another encoding: the reader then refuses the first invalid row, rather than reading every
accented value as mojibake), else Windows-1252 if it decodes, else Latin-1 (which decodes any byte).
Samples: the first SAMPLE_BYTES plus WINDOWS windows spread over the rest of the file (the last one ending
at the end), so a non-UTF-8 byte far from the start is usually noticed; one that is missed gives a clear
read error later. A UTF-8 head with one line in another encoding is refused with that line
(mixed_utf8_line); NUL bytes without a byte-order mark mean a binary file. Delimiter: the candidate that
splits the sampled lines into the same number (> 1) of fields most consistently. Decimal mark: "," when the
delimiter is not "," and numbers written like 1,5 outnumber numbers written like 1.5 (ASCII digits only).
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
_COMMA_NUMBER = re.compile(r"[+-]?[0-9]+,[0-9]+")  # ASCII digits only, as the release's number rule
_DOT_NUMBER = re.compile(r"[+-]?[0-9]+\.[0-9]+")

BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def read_samples(path) -> tuple[bytes, list[bytes]]:
    """The head of the file and a few windows from the rest."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(SAMPLE_BYTES)
        windows = []
        if size > SAMPLE_BYTES:
            last = max(SAMPLE_BYTES, size - WINDOW_BYTES)  # the final window ends at the end of the file
            for i in range(WINDOWS):
                fh.seek(SAMPLE_BYTES + (last - SAMPLE_BYTES) * i // (WINDOWS - 1))
                windows.append(fh.read(WINDOW_BYTES))
    return head, windows


def bom_encoding(head: bytes) -> str | None:
    for bom, name in BOMS:
        if head.startswith(bom):
            return name
    return None


def _decodes(data: bytes, encoding: str, cut_both_ends: bool) -> bool:
    """Strict decode; a window may start or end inside a multi-byte character, so up to 3 bytes at a cut
    edge are allowed to be incomplete."""
    if cut_both_ends and encoding == "utf-8":
        start = 0
        while start < min(3, len(data)) and 0x80 <= data[start] < 0xC0:  # continuation bytes of a cut char
            start += 1
        data = data[start:]
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    try:
        decoder.decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return True


def has_utf8_text(sample: bytes) -> bool:
    """Whether some line of ``sample`` holds non-ASCII text and decodes as UTF-8 as a whole: evidence that the
    file is UTF-8 (Windows-1252 text almost never forms valid multi-byte UTF-8 sequences on a whole line)."""
    for raw in sample.split(b"\n"):
        if raw.isascii():
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        return True
    return False


def guess_encoding(head: bytes, windows: list[bytes]) -> str:
    """The BOM's encoding; else UTF-8 when every sample decodes as UTF-8 or any sampled line is non-ASCII UTF-8
    text (then invalid bytes elsewhere are a read error naming their row, never a silent cp1252 reading of the
    whole file); else cp1252 when it decodes every sample; else Latin-1."""
    bom = bom_encoding(head)
    if bom:
        return bom
    if _decodes(head, "utf-8", False) and all(_decodes(w, "utf-8", True) for w in windows):
        return "utf-8"
    if has_utf8_text(head) or any(has_utf8_text(w) for w in windows):
        return "utf-8"
    if _decodes(head, "cp1252", False) and all(_decodes(w, "cp1252", True) for w in windows):
        return "cp1252"
    return "latin-1"


def mixed_utf8_line(head: bytes) -> int | None:
    """Line number (1-based) of the first line of ``head`` that is not valid UTF-8 when another line holds valid
    non-ASCII UTF-8: a UTF-8 file with a line in another encoding, which no single encoding reads correctly."""
    lines = head.split(b"\n")
    if len(head) >= SAMPLE_BYTES and len(lines) > 1:
        lines = lines[:-1]  # possibly cut
    first_bad, utf8_text = None, False
    for number, raw in enumerate(lines, 1):
        if raw.isascii():
            continue
        try:
            raw.decode("utf-8")
            utf8_text = True
        except UnicodeDecodeError:
            first_bad = first_bad or number
        if first_bad and utf8_text:
            return first_bad
    return None


def looks_binary(head: bytes) -> bool:
    """NUL bytes without a UTF-16/32 byte-order mark: not a text file."""
    return b"\x00" in head and bom_encoding(head) is None


def sample_lines(head: bytes, encoding: str, max_lines: int = 200) -> list[str]:
    """Complete lines of the head (the last, possibly cut, line is dropped when more follow)."""
    text = head.decode(encoding, errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines()
    if len(head) >= SAMPLE_BYTES and len(lines) > 1:
        lines = lines[:-1]
    return [ln for ln in lines[:max_lines] if ln.strip()]


def guess_delimiter(lines: list[str], default: str = ",") -> str:
    """The delimiter giving the most lines with the header's field count (> 1 fields), quotes respected."""
    best, best_score = default, -1.0
    for delim in DELIMITERS:
        try:
            rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=delim))
        except csv.Error:
            continue
        if not rows or len(rows[0]) < 2:
            continue
        width = len(rows[0])
        score = sum(1 for r in rows if len(r) == width) / len(rows) + 0.01 * min(width, 50)
        if score > best_score:
            best, best_score = delim, score
    return best


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
