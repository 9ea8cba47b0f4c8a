"""The design step's numbers and messages say what is true (optrr_engine.release.design_step, report, manifest):
a mechanism given in the configuration has its own budget entry, report text and refusals; per-column epsilons
that target_total overrides are said to be ignored, to the data manager only (never in the manifest or report); the
budget search's progress, the refusal of a needed table a sampling design cannot carry and a tampered manifest's
overall_epsilon are told in plain words with their numbers."""

import json

import pytest

from optrr_engine.cli.main import main
from optrr_engine.designs import run_design
from optrr_engine.errors import InputError
from tests.conftest import TEST_DATA
from tests.test_cli_design import run

CAR = TEST_DATA / "car.csv"
#: The columns of car.csv released here (3, 3, 3 and 4 categories); the others are dropped.
KEPT = ("persons", "lug_boot", "safety", "class")
SIZES = "3,3,3,4"
IGNORED = "per-column epsilons in the configuration are ignored: target_total sets them from the weights"


@pytest.fixture(scope="module")
def utility_mechanism() -> dict:
    """The "mechanism" of `optrr design --method utility` at whole-record epsilon 2 for these columns (its column
    epsilons are about 0.713, 0.713, 0.713 and 0.771: no single scale of equal weights)."""
    code, out, err = run("design", "--method", "utility", "--sizes", SIZES, "--target-total", "2", "--json",
                         "--with-mechanism")
    assert code == 0, err
    return json.loads(out)["mechanism"]


@pytest.fixture
def schema(tmp_path, capsys) -> dict:
    """`optrr schema` of car.csv (every column at epsilon 1.0), with only KEPT perturbed."""
    return car_schema(tmp_path, capsys, KEPT)


def car_schema(tmp_path, capsys, perturbed) -> dict:
    """`optrr schema` of car.csv written to tmp_path/schema.json and read back, the columns not named in
    ``perturbed`` dropped."""
    path = tmp_path / "schema.json"
    assert main(["schema", str(CAR), "-o", str(path), "--quiet"]) == 0
    capsys.readouterr()
    cfg = json.loads(path.read_text())
    for c in cfg["columns"]:
        if c["name"] not in perturbed:
            c["role"] = "drop"
    return cfg


def perturb(tmp_path, capsys, cfg: dict, name: str = "out"):
    """Release car.csv with ``cfg``: (exit code, stderr, manifest or None, external report or None)."""
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(cfg))
    out = tmp_path / f"{name}.csv"
    code = main(["perturb", str(CAR), "--config", str(path), "-o", str(out), "--quiet", "--allow-repeat"])
    err = capsys.readouterr().err
    if code != 0:
        return code, err, None, None
    manifest = json.loads((tmp_path / f"{name}.csv.manifest.json").read_text())
    return code, err, manifest, (tmp_path / f"{name}.csv.report.html").read_text(encoding="utf-8")


def given(cfg: dict, mechanism: dict, method: str = "utility", target=None, epsilon=None) -> dict:
    cfg = {**cfg, "method": method, "target_total": target, "mechanism": mechanism}
    if epsilon is not None:
        cfg["columns"] = [{**c, "epsilon": epsilon} for c in cfg["columns"]]
    return cfg


def notes(err: str) -> list[str]:
    return [ln.removeprefix("optrr: note: ") for ln in err.splitlines() if ln.startswith("optrr: note: ")]


# -- 1. a given mechanism's budget entry and report --------------------------------------------------------------


@pytest.mark.parametrize(("target", "where"), [(2, "at"), (5, "below")])
def test_a_given_mechanism_states_its_whole_record_epsilon_and_no_false_scale(
    tmp_path, capsys, schema, utility_mechanism, target, where
):
    code, err, manifest, report = perturb(tmp_path, capsys, given(schema, utility_mechanism, target=target))
    assert code == 0, err
    budget = manifest["design"]["budget"]
    achieved = [a["achieved_epsilon"] for a in manifest["attributes"]]
    assert max(achieved) > min(achieved) * 1.05  # unequal column epsilons under equal weights: no single scale
    assert "scale" not in budget
    assert budget["target_total"] == target and budget["mechanism"] == "given in the configuration"
    assert "whole_record_epsilon" not in budget  # the manifest's overall_epsilon says it (checked on load)
    assert "weights scaled by" not in report
    assert (
        "The mechanism was given in the configuration and used unchanged (not designed again from the weights; every "
        f"epsilon is recomputed from it): its whole-record epsilon 2 is {where} the target." in report
    )


def test_a_given_mechanism_whose_epsilons_are_one_scale_of_the_weights_keeps_its_scale(tmp_path, capsys, schema):
    weights = [1.0, 1.0, 1.0, 2.0]
    kron = run_design("kronecker", [3, 3, 3, 4], [0.3 * w for w in weights]).mechanism  # whole-record 1.5
    cfg = given(schema, kron.to_dict(), method="kronecker", target=1.5)
    weight = dict(zip(KEPT, weights, strict=True))
    cfg["columns"] = [{**c, "weight": weight[c["name"]]} if c["name"] in weight else c for c in cfg["columns"]]
    code, err, manifest, report = perturb(tmp_path, capsys, cfg)
    assert code == 0, err
    assert manifest["design"]["budget"]["scale"] == pytest.approx(0.6, rel=1e-12)
    assert "its whole-record epsilon 1.5 is at the target; its column epsilons are the weights scaled by 0.6." in report


def test_a_given_mechanism_above_the_target_is_refused_with_the_way_out(tmp_path, capsys, schema, utility_mechanism):
    code, err, manifest, _ = perturb(tmp_path, capsys, given(schema, utility_mechanism, target=1.5))
    assert code == 2 and manifest is None
    assert "optrr: error: the configuration's mechanism has whole-record epsilon 2, above target_total 1.5" in err
    assert "remove 'mechanism' to let method 'utility' design anew for this target" in err
    assert not (tmp_path / "out.csv").exists()


# -- 2. a given mechanism above the per-column request -----------------------------------------------------------


def test_a_given_mechanism_above_a_column_request_names_the_mechanism_not_the_method(
    tmp_path, capsys, schema, utility_mechanism
):
    cfg = given(schema, utility_mechanism, method="auto", epsilon=0.75)
    code, err, _, _ = perturb(tmp_path, capsys, cfg)
    assert code == 2
    assert (
        "optrr: error: the mechanism in the configuration gives column 'class' epsilon 0.770843, above the "
        "requested 0.75" in err
    )
    assert "remove 'mechanism' to let method 'auto' design anew" in err and "accept_changed_epsilons" in err
    assert "choose method auto, optimal or family" not in err


def test_the_notes_say_the_configured_method_did_not_design_a_given_mechanism(
    tmp_path, capsys, schema, utility_mechanism
):
    code, err, manifest, _ = perturb(tmp_path, capsys, given(schema, utility_mechanism, method="auto", epsilon=1.0))
    assert code == 0, err
    expected = (
        "the mechanism given in the configuration, used unchanged (every epsilon is recomputed from it): the "
        "configuration's method 'auto' was not run, and the mechanism does not record which method designed it"
    )
    assert expected in notes(err) and expected in manifest["design"]["notes"]
    recorded = {"method": "utility", **utility_mechanism}  # as in a manifest's "mechanism"
    code, err, _, _ = perturb(tmp_path, capsys, given(schema, recorded, method="auto", epsilon=1.0), name="again")
    assert code == 0, err
    assert (
        "the mechanism given in the configuration, used unchanged (every epsilon is recomputed from it): it was "
        "designed by method 'utility', as recorded in it; the configuration's method 'auto' was not run"
    ) in notes(err)


# -- 3. per-column epsilons that target_total overrides -----------------------------------------------------------


def warnings(err: str) -> list[str]:
    return [ln.removeprefix("optrr: warning: ") for ln in err.splitlines() if ln.startswith("optrr: warning: ")]


def internal_report(folder, name: str = "out") -> str:
    (path,) = folder.glob(f"{name}.csv.*.internal-report.html")
    return path.read_text(encoding="utf-8")


def test_per_column_epsilons_overridden_by_the_target_are_told_to_the_data_manager_only(
    tmp_path, capsys, schema, audit_dir
):
    """The configuration's ignored epsilons are the data manager's matter (stderr, audit record, internal report),
    not the release's: the manifest and the external report are the same as for a configuration without them (as
    the GUI writes it), so CLI- and GUI-made manifests of one design do not differ."""
    cfg = {**schema, "method": "kronecker", "target_total": 2.0}  # the schema's epsilon 1.0 stays in every column
    code, err, manifest, report = perturb(tmp_path, capsys, cfg)
    assert code == 0, err
    assert any(w.startswith(IGNORED) and "never to the recipient" in w for w in warnings(err))
    assert not any("ignored" in n for n in notes(err))
    assert "ignored_column_epsilons" not in manifest["design"] and not any("ignored" in n for n in
                                                                           manifest["design"]["notes"])
    assert "ignored" not in report
    assert "(a target for the whole record; the design sets each column's epsilon)" in report
    assert IGNORED[0].upper() + IGNORED[1:] in internal_report(audit_dir)
    audit = json.loads((audit_dir / "optrr-audit.json").read_text())
    assert audit["releases"][-1]["config_warnings"] == [IGNORED]
    bare = {**cfg, "columns": [{k: v for k, v in c.items() if k != "epsilon"} for c in cfg["columns"]]}
    code, err, bare_manifest, bare_report = perturb(tmp_path, capsys, bare, name="bare")
    assert code == 0, err
    assert not any("ignored" in w for w in warnings(err) + notes(err))
    assert bare_manifest["design"] == manifest["design"]
    assert "(a target for the whole record; the design sets each column's epsilon)" in bare_report


def test_an_older_manifest_with_the_ignored_flag_and_note_still_reads_and_its_report_omits_them(
    tmp_path, capsys, schema
):
    from optrr_engine.release.manifest import load_manifest
    from optrr_engine.release.report import render_report

    code, err, manifest, _ = perturb(tmp_path, capsys, {**schema, "method": "kronecker", "target_total": 2.0})
    assert code == 0, err
    design = {**manifest["design"], "ignored_column_epsilons": True, "notes": [IGNORED, *manifest["design"]["notes"]]}
    path = tmp_path / "out.csv.manifest.json"
    path.write_text(json.dumps({**manifest, "design": design}))
    older = load_manifest(path)
    assert older["design"]["ignored_column_epsilons"] is True
    assert "ignored" not in render_report(older)


def test_a_sampling_design_tells_the_data_manager_the_per_column_epsilons_are_ignored(tmp_path, capsys, schema):
    code, err, manifest, report = perturb(tmp_path, capsys, {**schema, "method": "smp", "target_total": 2.0})
    assert code == 0, err
    note = "per-column epsilons in the configuration are ignored: the sampling design sets them from target_total"
    assert any(w.startswith(note) for w in warnings(err))
    assert note not in report and note not in manifest["design"]["notes"]
    assert "ignored_column_epsilons" not in manifest["design"]


# -- 4. the budget search's progress -----------------------------------------------------------------------------


def test_the_budget_search_progress_is_plain_words():
    from optrr_engine.budget import distribute_budget

    said = []
    distribute_budget("heuristic", [2, 3, 4], [1.0, 2.0, 0.5], 1.7, progress=lambda f, m: said.append(m))
    assert said and not any("budget scale" in m for m in said)
    lead = "finding the largest scale of the weights that stays within the target: "
    assert all(m.startswith(lead) for m in said)
    assert said[0] in (lead + "1 tried", *(lead + f"1 tried, {c} fits so far" for c in ("1.7", "0.4857")))
    assert "fits so far" in said[-1] and " 0 fits" not in said[-1]


# -- 5. messages --------------------------------------------------------------------------------------------------


def test_a_needed_pair_under_smp_asks_for_a_design_reporting_both_columns(tmp_path, capsys, schema):
    cfg = {**schema, "method": "smp", "target_total": 2.0, "needed_marginals": [["persons", "safety"]]}
    code, err, _, _ = perturb(tmp_path, capsys, cfg)
    assert code == 2
    # the design command's warning words it the same way (identifiability.never_together)
    assert "the needed marginal(s) (persons, safety) cannot be estimated: each record of this smp design " \
        "randomizes 1 column from the data, so no record carries both columns of the table together, whatever the " \
        "epsilon; the way out: a design whose records report both columns (sample-m with sample_m 2 or more, auto, " \
        "utility)" in err
    assert "higher whole-record epsilon" not in err


def test_a_tampered_overall_epsilon_is_refused_with_both_numbers(tmp_path, capsys, schema):
    from optrr_engine.release.manifest import load_manifest

    code, err, manifest, _ = perturb(tmp_path, capsys, {**schema, "method": "kronecker", "target_total": 2.0})
    assert code == 0, err
    path = tmp_path / "out.csv.manifest.json"
    path.write_text(json.dumps({**manifest, "overall_epsilon": 1.25}))
    with pytest.raises(InputError, match=r"states overall_epsilon 1\.25 but its mechanism gives 2\b"):
        load_manifest(path)
