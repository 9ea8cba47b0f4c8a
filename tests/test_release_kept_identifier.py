"""A kept column where (nearly) every row has its own value identifies the records (a GUI review: snpassoc's
'protein' kept, "157 of 157 rows have a value no other row has", approved by the one tick together with bin edges
and a 1-row 'NA'). The rule is the engine's (:func:`optrr_engine.release.schema.identifier_like`, which
``optrr perturb`` names in its refusal of a kept column, "it looks like an identifier", and which refuses perturbed
identifiers); like ``optrr perturb``, which refuses it unless --allow-flagged-kept, the release dialog releases it only
with its own confirmation naming the column: the tick of the orange list never approves it. Drop is the way out."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from optrr_engine.release.schema import identifier_like, kept_unique_refusal
from optrr_gui.release.dialog import (
    KEPT_IDENTIFIER_BOX,
    NEEDS_TICK,
    kept_identifier_columns,
    kept_identifier_problem,
    kept_unique_columns,
)
from tests.test_gui_datamanager import index_of
from tests.test_gui_release_publish_gate import dialog_on, opened, released  # noqa: F401 (fixture)
from tests.test_perturb_rare_and_unique_kept import write_csv

ROWS = 60
OWN_VALUE = f"'protein': every row has its own value ({ROWS} different values in {ROWS} rows)"


def protein_file(tmp_path) -> str:
    """``ROWS`` rows: protein a measurement of its own in every row (not dense integers: optrr schema bins it, no
    "likely identifier" warning), sex and site common."""
    rows = [f"{1000 + 7.31 * i:.3f},{'FM'[i % 2]},{'abc'[i % 3]}" for i in range(ROWS)]
    return write_csv(tmp_path, "proteins.csv", "protein,sex,site", rows)


def keep_protein_and_sex(window) -> None:
    for name in ("protein", "sex"):
        window.state.set_column_value(index_of(window, name), "role", "keep")


def identifier_row_shown(dialog) -> bool:
    return dialog._form.isRowVisible(dialog._identifier_row) and dialog.accept_identifier.isVisibleTo(dialog)


def test_the_tick_of_the_orange_list_never_approves_a_kept_identifier_its_own_box_does(qtbot, tmp_path, opened):  # noqa: F811
    window = opened(protein_file(tmp_path))
    keep_protein_and_sex(window)
    out = tmp_path / "rel.csv"
    dialog = dialog_on(qtbot, window, out)
    kept = dialog.published_outside()["kept"]
    assert kept[1] == "sex" and kept[0].startswith(OWN_VALUE) and "identifies the records" in kept[0], kept
    assert f"{OWN_VALUE}. Exporting it in the clear identifies the records" in dialog.columns_label.text()
    assert identifier_row_shown(dialog)
    assert dialog.accept_identifier.text() == KEPT_IDENTIFIER_BOX.format(names="'protein'")
    assert not dialog.accept_identifier.isChecked()
    problem = kept_identifier_problem([("protein", ROWS, ROWS)])
    assert "drop it or perturb it" in problem and "recipient may know who each record is" in problem
    assert dialog.problems() == [NEEDS_TICK, problem]

    dialog.accept_clear.setChecked(True)  # the general tick: everything else, never the identifier
    assert dialog.problems() == [problem]
    assert not dialog.release_button.isEnabled()
    approved = dialog.approved()["allow_flagged_kept"]
    assert "sex" in approved and "protein" not in approved
    assert not dialog.start() and problem in dialog.progress_label.text()
    assert dialog.result_state == "idle" and not out.exists()

    dialog.accept_identifier.setChecked(True)  # its own confirmation
    assert dialog.problems() == [] and dialog.release_button.isEnabled()
    assert {"sex", "protein"} <= dialog.approved()["allow_flagged_kept"]
    assert released(qtbot, dialog) == "done", dialog.progress_label.text()
    assert json.loads((tmp_path / "rel.csv.manifest.json").read_text())["kept_columns"] == ["protein", "sex"]


def test_the_own_box_alone_approves_nothing_and_drop_is_the_way_out(qtbot, tmp_path, opened):  # noqa: F811
    window = opened(protein_file(tmp_path))
    keep_protein_and_sex(window)
    dialog = dialog_on(qtbot, window, tmp_path / "rel.csv")
    dialog.accept_identifier.setChecked(True)
    assert dialog.problems() == [NEEDS_TICK]  # the rest still needs the tick of the orange list
    assert dialog.approved()["allow_flagged_kept"] == frozenset()

    assert dialog.drop_identifier_button.text() == "Drop protein"
    dialog.drop_identifier_button.click()  # one undo step, as the Design tab's role edits
    assert window.state.columns[index_of(window, "protein")].role == "drop"
    assert not identifier_row_shown(dialog) and not dialog.accept_identifier.isChecked()
    assert dialog.published_outside()["kept"] == ["sex"]
    dialog.accept_clear.setChecked(True)
    assert dialog.problems() == [] and dialog.release_button.isEnabled()

    window.stack.undo()  # kept again: asked again, its box cleared
    dialog._design_changed()
    assert identifier_row_shown(dialog) and not dialog.accept_identifier.isChecked()
    assert kept_identifier_problem([("protein", ROWS, ROWS)]) in dialog.problems()


def kept_counts(distinct: int, rows: int = 100) -> dict[str, int]:
    """Rows per value of a kept column: ``distinct`` values in ``rows`` rows, those not held by one row held by 2."""
    shared = rows - distinct
    return {**{f"u{i}": 1 for i in range(distinct - shared)}, **{f"s{i}": 2 for i in range(shared)}}


def test_a_kept_identifier_is_the_engines_identifier_rule_not_another():
    state = SimpleNamespace(columns=[SimpleNamespace(name="x", role="keep")])
    summaries = {"x": SimpleNamespace(rows=100)}
    for distinct in (89, 90, 100):
        counts = kept_counts(distinct)
        assert sum(counts.values()) == 100 and len(counts) == distinct
        unique = sum(1 for n in counts.values() if n == 1)
        assert kept_unique_columns(state, summaries, {"x": counts}) == [("x", unique, 100)]  # listed in orange
        found = kept_identifier_columns(state, summaries, {"x": counts})
        # the engine's words on the same column decide: "it looks like an identifier" in optrr perturb's refusal
        engine_says = "it looks like an identifier" in kept_unique_refusal([("x", unique, distinct)], 100)
        assert engine_says == identifier_like(distinct, 100) == (distinct >= 90)
        assert found == ([("x", distinct, 100)] if engine_says else []), (distinct, found)
    perturbed = SimpleNamespace(columns=[SimpleNamespace(name="x", role="perturb")])
    assert kept_identifier_columns(perturbed, summaries, {"x": kept_counts(100)}) == []


def test_an_identifier_the_release_finds_needs_its_own_box_whatever_the_summaries_hold(qtbot, tmp_path, opened):  # noqa: F811
    """The rows not read (still being read, or the read cancelled): no summaries, so nothing tells the dialog before
    the release that 'protein' identifies the records. The engine refuses it, counting its distinct values on the
    rows it releases: the same rule (:func:`kept_identifier_columns`) then asks for its own box, never the tick."""
    window = opened(protein_file(tmp_path))
    keep_protein_and_sex(window)
    window.summaries = {}  # as while the rows are read, or when their read was cancelled
    out = tmp_path / "rel.csv"
    dialog = dialog_on(qtbot, window, out)
    assert dialog.published_outside()["kept"] == ["protein", "sex"] and not identifier_row_shown(dialog)
    dialog.accept_clear.setChecked(True)
    assert dialog.problems() == [] and dialog.release_button.isEnabled()
    assert dialog.approved()["allow_flagged_kept"] == frozenset()  # not counted: the release counts them
    assert released(qtbot, dialog) == "failed"  # the engine refuses 'protein', counted on the rows it releases
    assert "it looks like an identifier" in dialog.progress_label.text() and not out.exists()

    kept = dialog.published_outside()["kept"]
    assert kept[1] == "sex" and kept[0].startswith(OWN_VALUE) and "identifies the records" in kept[0], kept
    assert f"{OWN_VALUE}. Exporting it in the clear identifies the records" in dialog.columns_label.text()
    assert identifier_row_shown(dialog) and not dialog.accept_identifier.isChecked()
    assert dialog.accept_identifier.text() == KEPT_IDENTIFIER_BOX.format(names="'protein'")
    problem = kept_identifier_problem([("protein", ROWS, ROWS)])
    dialog.accept_clear.setChecked(True)  # the general tick alone: never the identifier
    assert dialog.problems() == [problem] and not dialog.release_button.isEnabled()
    assert "protein" not in dialog.approved()["allow_flagged_kept"]  # 'sex', not counted, is left to the release
    assert not dialog.start() and problem in dialog.progress_label.text() and not out.exists()

    dialog.accept_identifier.setChecked(True)  # its own confirmation
    assert dialog.problems() == [] and dialog.release_button.isEnabled()
    assert "protein" in dialog.approved()["allow_flagged_kept"]
    assert released(qtbot, dialog) == "done", dialog.progress_label.text()
    assert json.loads((tmp_path / "rel.csv.manifest.json").read_text())["kept_columns"] == ["protein", "sex"]


def test_the_engines_refusal_of_a_kept_column_carries_its_distinct_values_the_message_unchanged(tmp_path):
    """What :func:`identifier_like` needs, counted on the rows released where the unique rows are: the refusal's
    ``kept_distinct`` (kept through a worker process and the window's wording); the message is the CLI's, as before."""
    import pickle

    import pytest

    from optrr_engine.release.perturb import PublishRefusal, perturb_file

    config = {
        "version": 1,
        "columns": [
            {"name": "protein", "role": "keep"},
            {"name": "sex", "role": "keep"},
            {"name": "site", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["a", "b", "c"]},
        ],
    }
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(protein_file(tmp_path), config, tmp_path / "rel.csv")
    exc = refused.value
    assert exc.kept == [("protein", ROWS, ROWS)] and exc.kept_distinct == [("protein", ROWS, ROWS)]
    assert str(exc) == kept_unique_refusal([("protein", ROWS, ROWS)], ROWS)  # the CLI's words
    for again in (pickle.loads(pickle.dumps(exc)), exc.reworded("worded for the window")):
        assert type(again) is PublishRefusal and (again.kept, again.kept_distinct) == (exc.kept, exc.kept_distinct)
    assert PublishRefusal("refused", kept=[("x", 30, 100)]).kept_distinct == []  # none said: none assumed


def test_a_kept_column_that_identifies_only_the_rows_released_is_refused_despite_the_general_tick(
    qtbot, tmp_path, opened  # noqa: F811
):
    """An adversarial review: 'pid' is unique on 80 of 100 rows read (not identifier-like for the window), but a
    perturbed column leaving 20 rows out makes it unique on all 80 rows released; the general tick approved it
    and the release published every row's ID. The engine now refuses a kept column identifying the rows released
    unless its own approval names it (allow_identifier_kept), and the dialog then asks for its own box."""
    from optrr_engine.release.perturb import PublishRefusal, perturb_file

    rows = [f"P{i:03d},{'ab'[i % 2]},{'xy'[i % 2]}" for i in range(80)] + [f"P999,,{'xy'[i % 2]}" for i in range(20)]
    src = write_csv(tmp_path, "k.csv", "pid,grp,s", rows)
    window = opened(src)
    window.state.set_column_value(index_of(window, "pid"), "role", "keep")
    window.state.set_column_value(index_of(window, "grp"), "role", "perturb")
    window.state.set_column_value(index_of(window, "grp"), "missing", "exclude")
    out = tmp_path / "rel.csv"
    dialog = dialog_on(qtbot, window, out)
    assert dialog._kept_identifiers == ()  # by the rows read, not an identifier
    dialog.accept_clear.setChecked(True)
    assert "pid" in dialog.approved()["allow_flagged_kept"] and not dialog.approved()["allow_identifier_kept"]
    assert released(qtbot, dialog) == "failed" and not out.exists()
    assert [n for n, _d, _r in dialog._kept_identifiers] == ["pid"]  # found by the release: its own box now
    dialog.accept_clear.setChecked(True)
    assert "pid" not in dialog.approved()["allow_flagged_kept"] and dialog.problems()
    dialog.accept_identifier.setChecked(True)
    assert dialog.approved()["allow_identifier_kept"] == {"pid"}
    assert released(qtbot, dialog) == "done"
    assert json.loads((tmp_path / "rel.csv.manifest.json").read_text())["kept_columns"] == ["pid"]
    # the command line's --allow-flagged-kept still approves both (allow_identifier_kept None: as allow_flagged_kept)
    config = {
        "columns": [
            {"name": "pid", "role": "keep"},
            {"name": "grp", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["a", "b"],
             "missing": "exclude"},
            {"name": "s", "role": "drop"},
        ],
        "method": "kronecker",
    }
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(src, config, tmp_path / "cli.csv", allow_flagged_kept={"pid"}, allow_identifier_kept=set(),
                     audit_dir=tmp_path)
    assert refused.value.kept_distinct == [("pid", 80, 80)] and "it looks like an identifier" in str(refused.value)
    perturb_file(src, config, tmp_path / "cli2.csv", allow_flagged_kept={"pid"}, audit_dir=tmp_path, allow_repeat=True)
