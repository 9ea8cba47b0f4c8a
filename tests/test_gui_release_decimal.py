"""The release dialog reads the numbers of a binned column with the decimal mark the release reads the file with (the
one the column summaries were counted with, detected in the file: jobs/summaries.py), so its check of the released
categories (identifier-like columns, :func:`optrr_gui.release.dialog.identifier_columns`) counts each number in its
bin. With a decimal comma read as a point, "12,5" is no number: every value would be released as missing."""

from __future__ import annotations

import pytest

from optrr_engine.release.bins import assign, bin_labels
from optrr_gui.release import dialog as dialog_module
from optrr_gui.release.dialog import ReleaseDialog
from optrr_gui.state.role_fields import role_fields
from tests.test_gui_support import WAIT_MS, close_window, open_window

ROWS = 40
#: one bin per row: the released categories of "x" are as many as its rows (an identifier, which the dialog names)
EDGES = [float(e) for e in range(ROWS + 1)]


def numbers_file(folder, decimal: str) -> tuple[str, list[float]]:
    """A ';' file whose column x holds ROWS different numbers written with ``decimal`` (12,5 or 12.5)."""
    xs = [i + 0.5 for i in range(ROWS)]
    lines = ["x;g"] + [f"{x:.1f}".replace(".", decimal) + f";{'ABC'[i % 3]}" for i, x in enumerate(xs)]
    path = folder / f"numbers_{'comma' if decimal == ',' else 'point'}.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path), xs


@pytest.mark.parametrize("decimal", [",", "."])
def test_the_dialog_reads_binned_numbers_with_the_files_decimal_mark(qtbot, tmp_path, monkeypatch, decimal):
    path, xs = numbers_file(tmp_path, decimal)
    window = open_window(qtbot, tmp_path, path)
    try:
        qtbot.waitUntil(lambda: bool(window.summaries), timeout=WAIT_MS)
        assert window.state.reader_options.get("decimal") is None  # detected in the file, not given
        assert window.summaries["x"].decimal == decimal
        j = [c.name for c in window.state.columns].index("x")
        window.state.set_column_fields(j, role_fields(window.state, j, "perturb"))
        window.state.set_column_fields(j, {"type": "numeric", "bins": {"method": "edges", "edges": EDGES}})
        qtbot.waitUntil(window.is_ready, timeout=WAIT_MS)
        column = window.state.columns[j]
        assert column.role == "perturb" and column.type == "numeric" and column.bins["edges"] == EDGES

        passed: list[str] = []
        counted: list = []
        real = dialog_module.identifier_columns

        def spy(state, summaries, decimal_mark="."):
            passed.append(decimal_mark)
            out = real(state, summaries, decimal_mark)
            counted.append(out)
            return out

        monkeypatch.setattr(dialog_module, "identifier_columns", spy)
        dialog = ReleaseDialog(window, window)
        qtbot.addWidget(dialog)
        dialog.output.setText(str(tmp_path / "out.csv"))
        dialog._design_changed()
        problems = dialog.problems()
        assert passed and set(passed) == {decimal}  # the mark the dialog passes on: the file's
        # every number counted in its own bin (the engine's rule), so the column is named as an identifier
        idx, outside = assign(xs, EDGES)
        assert not outside.any() and len(set(idx.tolist())) == ROWS
        assert [bin_labels(EDGES)[i] for i in idx[:3].tolist()] == ["[0, 1)", "[1, 2)", "[2, 3)"]
        assert counted[-1] == [("x", ROWS, ROWS)]
        assert any(p.startswith(f"x has {ROWS} different values in {ROWS} rows: it looks like an identifier")
                   for p in problems), problems
        assert not dialog.start() and not (tmp_path / "out.csv").exists()
    finally:
        close_window(window)
