"""What openpyxl's read-only mode does not tell about a worksheet, found by one streaming scan of its XML:
merged cell ranges (``<mergeCell ref="A2:A4"/>``, which follow the cell data) and formula cells without a
stored result (``<c r="B2"><f>A2*2</f></c>``: a file written by a program that does not calculate, read with
``data_only`` as an empty cell).

The scan reads the decompressed XML in blocks with a little overlap, so a tag split between two blocks is seen;
a literal "<" cannot occur inside XML text (it is written "&lt;"), so the patterns only match elements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from openpyxl.utils.cell import column_index_from_string, range_boundaries

#: Decompressed bytes scanned at a time.
SCAN_BYTES = 4 << 20
#: Bytes of one block carried into the next (longer than any tag the patterns match, formulas aside).
OVERLAP = 4096
_P = rb"(?:[A-Za-z_][\w.-]*:)?"  # a namespace prefix
_MERGE = re.compile(rb"<" + _P + rb"mergeCell\s[^>]*?\bref=\"([A-Z]+[0-9]+(?::[A-Z]+[0-9]+)?)\"")
#: A cell (its attributes: group 1) whose first child is a formula and which has no (or an empty) value after it.
_FORMULA_NO_VALUE = re.compile(
    rb"<" + _P + rb"c(\s[^>]*)>\s*<" + _P + rb"f\b(?:[^>]*/>|[^>]*>[^<]*</" + _P + rb"f>)"
    rb"\s*(?:<" + _P + rb"v\s*/>|<" + _P + rb"v\s*>\s*</" + _P + rb"v>\s*)?</" + _P + rb"c>"
)
_REF = re.compile(rb"\sr=\"([A-Z]+)([0-9]+)\"")
#: A result type other than a number: an empty value is a stored result (a formula giving "" is t="str").
_TEXT_TYPE = re.compile(rb"\st=\"(?!n\")")


@dataclass
class SheetScan:
    """``merged``: the merged ranges ("A2:A4") in file order; ``formulas``: {1-based column: first row} of the
    formula cells without a stored result."""

    merged: list[str] = field(default_factory=list)
    formulas: dict[int, int] = field(default_factory=dict)


def scan_sheet(stream) -> SheetScan:
    """Scan a worksheet's XML (a binary stream) for merged ranges and formulas without a stored result."""
    out = SheetScan()
    seen: set[bytes] = set()
    tail = b""
    while True:
        block = stream.read(SCAN_BYTES)
        data = tail + block
        if b"mergeCell" in data:
            for m in _MERGE.finditer(data):
                if m.group(1) not in seen:
                    seen.add(m.group(1))
                    out.merged.append(m.group(1).decode("ascii"))
        if any(tag in data for tag in (b"<f>", b"<f ", b":f>", b":f ")):  # (text cannot hold "<")
            for m in _FORMULA_NO_VALUE.finditer(data):
                ref = _REF.search(m.group(1))
                if ref is None or _TEXT_TYPE.search(m.group(1)):
                    continue  # no address (rare; then not told), or an empty text result
                col, row = column_index_from_string(ref.group(1).decode("ascii")), int(ref.group(2))
                out.formulas[col] = min(row, out.formulas.get(col, row))
        if not block:
            return out
        tail = data[-OVERLAP:]


def affected_columns(ref: str, first_data_row: int = 2) -> list[int]:
    """The 1-based columns of a merged range ``ref`` with a cell at or below ``first_data_row`` that is not the
    range's top-left cell (those cells read as empty)."""
    min_col, min_row, max_col, max_row = range_boundaries(ref)
    assert min_col is not None and min_row is not None and max_col is not None and max_row is not None
    if max_row < first_data_row:
        return []
    columns = set(range(min_col, max_col + 1))
    if min_row >= first_data_row and min_row == max_row:
        columns.discard(min_col)  # one row: only the cells to the right of the first are empty
    return sorted(columns)
