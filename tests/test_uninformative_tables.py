"""Tables that carry almost no information at a release's row count (the data remove less than NO_INFORMATION of
the prior's spread, ``MarginalError.information``) are named: in the release's notes
(``release_check.uninformative_notes``), by ``optrr estimate`` and ``optrr analyze`` (a warning line and JSON
fields) and in the Analyse tab. A reviewer's 309-row release at target_total 0.3 said nothing anywhere, while its
estimate printed five-digit shares with intervals [0, 1] and its test "p = 0.951"."""

from __future__ import annotations

import json

import pytest

from optrr_engine.cli.main import main
from optrr_engine.estimation.release_estimate import open_release
from optrr_engine.utility.predicted import NO_INFORMATION
from optrr_engine.utility.release_check import estimate_information, uninformative_notes
from tests.conftest import TEST_DATA

COLUMNS = ("buying", "doors", "lug_boot", "safety")
PAIR = ["buying", "safety"]
#: car.csv keeps one row in STEP: 288 rows, all categories present (its first 300 rows are all buying = vhigh).
STEP = 6
ROWS = 288
WARNING = "optrr: warning: at 288 rows this release carries almost no information on (buying, safety)"


def release(tmp_path, capsys, name: str, **top) -> str:
    """A test-seed release of the COLUMNS of every STEP-th row of car.csv, with the configuration keys ``top``
    (and, without target_total, epsilon 4 on every column); returns the release file's path."""
    lines = (TEST_DATA / "car.csv").read_text().splitlines()
    data = tmp_path / "cars.csv"
    data.write_text("\n".join([lines[0], *lines[1::STEP]]) + "\n")
    schema = tmp_path / "schema.json"
    assert main(["schema", str(TEST_DATA / "car.csv"), "-o", str(schema), "--quiet", "--force"]) == 0
    cfg = json.loads(schema.read_text())
    for c in cfg["columns"]:
        c.pop("epsilon", None)
        c["role"] = "perturb" if c["name"] in COLUMNS else "drop"
        if c["role"] == "perturb" and "target_total" not in top:
            c["epsilon"] = 4.0
    cfg.update(top, needed_marginals=[PAIR])
    config = tmp_path / f"{name}.json"
    config.write_text(json.dumps(cfg))
    out = tmp_path / f"{name}.csv"
    args = ["perturb", str(data), "--config", str(config), "-o", str(out), "--quiet", "--insecure-test-seed", "7"]
    assert main([*args, "--allow-repeat"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return str(out)


@pytest.fixture
def weak(tmp_path, capsys, audit_dir, developer) -> str:
    """A release at whole-record epsilon 0.15 (budget mode) of 288 rows: its (buying, safety) table carries almost
    no information."""
    return release(tmp_path, capsys, "weak", target_total=0.15)


@pytest.fixture
def strong(tmp_path, capsys, audit_dir, developer) -> str:
    """The same rows at epsilon 4 on every column: the table is well informed."""
    return release(tmp_path, capsys, "strong")


def run(capsys, *args) -> tuple[str, str]:
    assert main(list(args)) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_the_notes_name_a_table_without_information_at_the_release_rows(weak, strong):
    manifest, mechanism = open_release(weak)
    names = [a["name"] for a in manifest["attributes"]]
    assert manifest["rows"] == ROWS
    (note,) = uninformative_notes(mechanism, names, [PAIR, ["doors"]], ROWS)  # the 1-way table is informed
    assert note.startswith("table (buying, safety): the data remove ")
    assert note.endswith(
        " % of the prior's uncertainty at 288 rows: its estimate will be close to uniform whatever the data; more "
        "epsilon, fewer columns or more rows"
    )
    assert uninformative_notes(mechanism, names, [PAIR], 10**7) == []  # more rows inform it
    assert uninformative_notes(mechanism, names, None, ROWS) == []
    manifest, mechanism = open_release(strong)
    assert uninformative_notes(mechanism, names, [PAIR], ROWS) == []


def test_the_notes_name_the_first_tables_and_count_the_others():
    from optrr_engine.designs.kronecker import kronecker
    from optrr_engine.utility.release_check import SHOWN_TABLES

    mechanism, _ = kronecker([3] * 10, [0.05] * 10)
    names = [f"c{i}" for i in range(10)]
    pairs = [[a, b] for i, a in enumerate(names) for b in names[i + 1 :]]  # 45 tables, none informed
    notes = uninformative_notes(mechanism, names, pairs, ROWS)
    assert len(notes) == SHOWN_TABLES + 1 and notes[0].startswith("table (c0, c1): ")
    assert notes[-1] == f"and {len(pairs) - SHOWN_TABLES} more needed table(s) carry almost no information at 288 rows"


def test_the_notes_of_a_sampling_design_count_the_rows_that_report_the_table():
    from optrr_engine.sampling import make_sampling_design

    design = make_sampling_design("sample-m", [4, 4, 3, 3], 0.2, m=2)
    (note,) = uninformative_notes(design, list(COLUMNS), [["buying", "safety"]], ROWS)
    assert note.startswith("table (buying, safety): the data remove ")
    assert (
        "at 288 rows (the design expects about 48 of them to report this table): its estimate will be close to uniform"
        in note
    )


def test_estimate_warns_and_says_so_in_its_json(weak, capsys):
    out, err = run(capsys, "estimate", weak, "--marginal", "buying,safety")
    assert WARNING in err
    assert "the estimate is close to uniform (the prior) whatever the data; intervals span nearly everything" in err
    _, err = run(capsys, "estimate", weak, "--marginal", "buying,safety", "--method", "unbiased")
    assert WARNING in err and "the estimate is mostly randomization noise" in err
    out, err = run(capsys, "estimate", weak, "--marginal", "buying,safety", "--json")
    info = json.loads(out)["info"]
    assert info["no_information"] is True and 0 <= info["information"] < NO_INFORMATION
    assert f"optrr: warning: {info['uninformative']}" in err


def test_analyze_warns_that_the_test_has_almost_no_power(weak, capsys):
    _, err = run(capsys, "analyze", weak, "--chi2", "buying,safety")
    assert WARNING in err
    assert "the tests have almost no power: a large p-value says nothing about independence" in err
    out, _ = run(capsys, "analyze", weak, "--chi2", "buying,safety", "--json")
    result = json.loads(out)
    assert result["no_information"] is True and 0 <= result["information"] < NO_INFORMATION
    assert "almost no power" in result["uninformative"]


def test_a_well_informed_table_gets_no_warning(strong, capsys):
    out, err = run(capsys, "estimate", strong, "--marginal", "buying,safety")
    assert "almost no information" not in err
    info = json.loads(run(capsys, "estimate", strong, "--marginal", "buying,safety", "--json")[0])["info"]
    eps = ", ".join(f"{n} {e:.4g}" for n, e in zip(("buying", "safety"), info["attribute_epsilons"], strict=True))
    assert f"; per attribute: {eps}\n" in out  # each epsilon named by its attribute
    out, _ = run(capsys, "estimate", strong, "--marginal", "buying,safety", "--json")
    info = json.loads(out)["info"]
    assert info["no_information"] is False and info["information"] > NO_INFORMATION
    assert "uninformative" not in info
    _, err = run(capsys, "analyze", strong, "--chi2", "buying,safety")
    assert "almost no information" not in err and "almost no power" not in err
    out, _ = run(capsys, "analyze", strong, "--chi2", "buying,safety", "--json")
    result = json.loads(out)
    assert result["no_information"] is False and "uninformative" not in result


def test_estimate_information_of_one_table(weak):
    manifest, mechanism = open_release(weak)
    weak_pair = estimate_information(manifest, mechanism, PAIR)
    assert weak_pair["no_information"] and weak_pair["uninformative"].startswith(WARNING.split("warning: ")[1])
    reversed_pair = estimate_information(manifest, mechanism, PAIR[::-1])  # the same table, named as asked
    assert reversed_pair["information"] == weak_pair["information"]
    assert "no information on (safety, buying)" in reversed_pair["uninformative"]
    one_way = estimate_information(manifest, mechanism, ["doors"])
    assert not one_way["no_information"] and "uninformative" not in one_way


def test_the_analyse_tab_shows_the_warning(qtbot, window, weak):
    from optrr_gui.main_window import TAB_ANALYSE
    from optrr_gui.workers.jobs.analyse import estimate_task

    window.tabs.setCurrentIndex(TAB_ANALYSE)  # built on first use
    view = window.analyse_view
    result = estimate_task(weak, PAIR, None, "map", 0.95, open_release(weak))  # the Analyse tab's job
    assert result["estimate"].info["no_information"]
    view._estimated(result)
    assert "almost no information on (buying, safety)" in view.result_label.text()
    assert "the tests have almost no power" in view.tests.toPlainText()


def test_design_counts_the_tables_without_information_by_the_same_rule(capsys):
    """optrr design's predicted error says per order how many needed tables carry no information (the rule of the
    release notes), beside the unbiased estimate's 'too noisy' count, and gives each table's information share."""
    args = ["design", "--sizes", "4,4,3,4", "--method", "kronecker", "--target-total", "0.2", "--rows", str(ROWS)]
    out, _ = run(capsys, *args, "--marginals", "1,4;", "--json")
    pe = json.loads(out)["predicted_error"]
    (table,) = pe["marginals"]
    assert table["information"] < NO_INFORMATION and pe["by_order"]["2"]["no_information"] == 1
    text, _ = run(capsys, *args, "--marginals", "1,4;")
    assert "too noisy for the unbiased estimate at these rows: 1; no information at these rows" in text
    assert "of the prior's spread): 1" in text
    out, _ = run(capsys, *args[:-2], "--rows", "1000000", "--marginals", "1,4;", "--json")
    assert json.loads(out)["predicted_error"]["by_order"]["2"]["no_information"] == 0  # more rows inform it


def test_a_release_names_its_needed_tables_without_information(tmp_path, capsys, audit_dir, developer):
    """perturb's rows_check (CLI and window alike): the manifest's notes, the report and stderr name the needed
    table that carries almost no information at the rows released; a well-informed release has no such note."""
    from optrr_engine.release.manifest import manifest_path, report_path

    weak = release(tmp_path, capsys, "weak", target_total=0.15)
    notes = json.loads(open(manifest_path(weak)).read())["design"]["notes"]
    assert any(n.startswith("table (buying, safety): the data remove ") for n in notes)
    assert "table (buying, safety): the data remove " in open(report_path(weak)).read()
    strong = release(tmp_path, capsys, "strong")
    strong_notes = json.loads(open(manifest_path(strong)).read())["design"]["notes"]
    assert not any("table (buying, safety)" in n for n in strong_notes)


def test_the_windows_release_job_adds_the_same_notes(tmp_path, capsys, audit_dir, developer):
    from optrr_engine.release.manifest import manifest_path
    from optrr_gui.workers.jobs.release import run_release

    release(tmp_path, capsys, "weak", target_total=0.15)  # writes the configuration and data released again below
    config = json.loads((tmp_path / "weak.json").read_text())
    out = tmp_path / "window" / "rel.csv"
    out.parent.mkdir()
    options = {"seed": 7, "developer": True, "allow_repeat": True, "audit_dir": str(audit_dir)}
    made = run_release(str(tmp_path / "cars.csv"), config, str(out), options)
    assert any(n.startswith("table (buying, safety): the data remove ") for n in made["manifest"]["design"]["notes"])
    assert json.loads(open(manifest_path(str(out))).read())["design"]["notes"] == made["manifest"]["design"]["notes"]
