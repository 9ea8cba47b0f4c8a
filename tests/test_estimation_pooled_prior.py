"""The default estimate's 1-way prior, bounded by the release's own spread (optrr_engine.estimation.pooled_prior):
the spread term against dense matrices, the bound's coverage and power under its model, the estimate that uses it,
and releases (mechanism and sampling) estimated from every column."""

import numpy as np
import pandas as pd
import pytest

from optrr_engine.cli.main import main
from optrr_engine.dense import dense_matrix
from optrr_engine.designs import run_design
from optrr_engine.errors import InputError
from optrr_engine.estimation import estimate_from_counts, estimate_release
from optrr_engine.estimation.estimate import prior_records
from optrr_engine.estimation.pooled_prior import (
    SpreadTerm,
    concentration_bound,
    one_way_prior_bound,
    spread_term,
)
from optrr_engine.release.config import ReleaseConfig
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import infer_schema
from tests.conftest import ROOT


def grr(d: int, eps: float):
    """A one-column mechanism (generalized randomized response at eps)."""
    return run_design("optimal", [d], [eps]).mechanism


def test_spread_term_matches_dense_matrices():
    mech = grr(5, 1.3)
    counts = np.array([40, 7, 0, 19, 134])
    n = counts.sum()
    lam = counts / n
    m = dense_matrix(mech)
    inv = np.linalg.inv(m)
    pi = inv @ lam
    cov = (inv @ np.diag(lam) @ inv.T - np.outer(pi, pi)) / n
    dev = pi - 0.2
    term = spread_term(mech, counts)
    # the trace of the covariance estimated without bias: the plug-in trace times n / (n - 1)
    assert term.excess == pytest.approx(dev @ dev - np.trace(cov) * n / (n - 1), rel=1e-9)
    assert term.variance == pytest.approx(4 * dev @ cov @ dev + 2 * np.sum(cov * cov), rel=1e-9)
    assert term.expected == pytest.approx(0.8)


def test_the_spread_term_is_unbiased_with_a_few_reports_per_column():
    """A review: an SMP release of the 157-row SNP file gives each of its 35 columns about 4.5 reports; the plug-in
    trace fell short by (n - 1)/n, the excess summed to more than point masses have, the bound went to 0 and the
    default estimate became maximum likelihood (1-way AVD 0.40 against 0.32 without the bound). The mean excess over
    many releases of 5 reports is the true spread ||pi - u||^2 (at eps 3, where no column's noise is left out); the
    plug-in excess is not."""
    d, reports = 3, 5
    mech = grr(d, 3.0)
    m = dense_matrix(mech)
    inv = np.linalg.inv(m)
    pi = np.array([0.7, 0.25, 0.05])
    rng = np.random.default_rng(4)
    excess, plug_in = [], []
    for counts in rng.multinomial(reports, m @ pi, size=40_000):
        term = spread_term(mech, counts)
        excess.append(term.excess)
        lam = counts / reports
        est = inv @ lam
        cov = (inv @ np.diag(lam) @ inv.T - np.outer(est, est)) / reports
        plug_in.append(float(np.sum((est - 1 / d) ** 2) - np.trace(cov)))
    true = float(np.sum((pi - 1 / d) ** 2))
    se = np.std(excess) / np.sqrt(len(excess))
    assert abs(np.mean(excess) - true) < 4 * se
    assert np.mean(plug_in) - true > 8 * se  # what the bound used before: the spread overstated
    assert spread_term(mech, np.array([1, 0, 0])) is None  # one report cannot estimate its own noise


def test_columns_of_a_few_reports_each_do_not_bound_the_prior_below_their_concentration():
    """The SNP file's SMP release at eps 1 (35 columns, about 4.5 reports each): a column's noise judged at its own
    counts is 0 when its few reports fall on one value, so those columns were kept and their neighbours left out,
    and the bound fell to 0 (the default estimate became maximum likelihood: 1-way AVD 0.40 instead of 0.32). With
    columns drawn from Dirichlet(1) (total concentration 3), the 95 % upper bound falls below 3 in at most about
    5 % of releases."""
    rng = np.random.default_rng(7)
    mech = grr(3, 1.0)
    m = dense_matrix(mech)
    below = 0
    for _ in range(200):
        tables = []
        for _column in range(35):
            counts = rng.multinomial(rng.poisson(4.5), m @ rng.dirichlet(np.ones(3)))
            tables.append((mech, counts))
        bound = one_way_prior_bound(tables)
        below += bound is not None and bound < 3.0
    assert below <= 20


def test_spread_term_of_an_unreported_or_joint_table_is_none():
    assert spread_term(grr(3, 1.0), np.zeros(3)) is None
    two = run_design("optimal", [2, 3], [1.0, 1.0]).mechanism
    assert spread_term(two.marginal([0, 1]), np.ones((2, 3))) is None


def test_bound_from_terms():
    # S = 0.5, sd = sqrt(0.01) = 0.1, S_low = 0.5 - 1.645 * 0.1 = 0.3355; A_up = 1.5 / 0.3355 - 1
    terms = [SpreadTerm(0.25, 0.005, 0.75), SpreadTerm(0.25, 0.005, 0.75), None]
    assert concentration_bound(terms) == pytest.approx(1.5 / (0.5 - 1.6448536269514722 * 0.1) - 1, rel=1e-9)
    assert concentration_bound([SpreadTerm(0.1, 0.01, 0.5)]) is None  # S_low < 0: no bound
    assert concentration_bound([None]) is None
    assert concentration_bound([SpreadTerm(10.0, 1e-6, 0.5)]) == 0.0  # never negative


def simulated_bound(rng, conc: float, k: int, d: int, n: int, eps: float) -> tuple[float | None, float]:
    """One release of k columns of d categories whose shares are drawn from Dirichlet(conc / d), n records each,
    every column through GRR at eps: (the release's bound, the concentration A_data the columns' own shares have,
    sum_j (1 - 1/d) / sum_j ||pi_j - u||^2 - 1)."""
    mech = grr(d, eps)
    m = dense_matrix(mech)
    tables, spread = [], 0.0
    for _ in range(k):
        data = rng.multinomial(n, rng.dirichlet(np.full(d, conc / d)))
        spread += float(np.sum((data / n - 1.0 / d) ** 2))
        perturbed = sum(rng.multinomial(int(c), m[:, x]) for x, c in enumerate(data))
        tables.append((mech, perturbed))
    return one_way_prior_bound(tables), k * (1.0 - 1.0 / d) / spread - 1.0


def test_bound_covers_the_columns_own_concentration_and_fires_with_enough_reports():
    """The bound is one-sided at 95 % for the spread of the release's own columns (given their data: the noise is
    the perturbation's): at least A_data in about 95 % of releases. With 15 columns of 2,000 records drawn with
    concentration 3 it is finite and below the default prior of 6 records in most releases; with 20 records per
    column it almost never is."""
    rng = np.random.default_rng(11)
    runs = [simulated_bound(rng, 3.0, 15, 6, 2000, 2.0) for _ in range(150)]
    covered = sum(b is None or b >= a for b, a in runs) / len(runs)
    assert covered >= 0.9
    finite = [b for b, _ in runs if b is not None]
    assert len(finite) / len(runs) >= 0.8
    assert np.median(finite) < prior_records(6, 2000)
    few = [simulated_bound(rng, 3.0, 15, 6, 20, 1.0)[0] for _ in range(100)]
    assert sum(b is not None and b < prior_records(6, 20) for b in few) <= 10


def test_a_uniform_release_is_not_bounded_below_the_default():
    rng = np.random.default_rng(3)
    lowered = []
    for _ in range(60):
        b = simulated_bound(rng, 1e6, 15, 6, 2000, 2.0)[0]  # every column almost exactly uniform
        lowered.append(b is not None and b < prior_records(6, 2000))
    assert sum(lowered) <= 6  # the one-sided 5 % (pooled over the columns: one test per release)


def test_the_estimate_uses_the_bound_on_one_way_tables_only():
    mech = grr(4, 1.0)
    counts = np.array([300, 20, 10, 70])
    plain = estimate_from_counts(mech, counts)
    assert plain.info["prior_records"] == prior_records(4, 400) and "prior_lowered" not in plain.info
    above = estimate_from_counts(mech, counts, prior_bound=50.0)
    np.testing.assert_array_equal(above.estimate, plain.estimate)
    assert "prior_lowered" not in above.info
    low = estimate_from_counts(mech, counts, prior_bound=0.5)
    assert low.info["prior_records"] == 0.5 and "0.5 pseudo-records instead of 4" in low.info["prior_lowered"]
    assert "maximum likelihood" in estimate_from_counts(mech, counts, prior_bound=0.0).info["prior_lowered"]
    assert low.estimate[0] > plain.estimate[0]  # pulled less towards uniform: the large share stays larger
    assert low.estimate.sum() == pytest.approx(1.0)
    for method in ("ibu", "unbiased", "clip"):  # only the default estimate has a prior
        a = estimate_from_counts(mech, counts, method=method, prior_bound=0.5)
        np.testing.assert_array_equal(a.estimate, estimate_from_counts(mech, counts, method=method).estimate)
    two = run_design("optimal", [2, 3], [1.0, 1.0]).mechanism.marginal([0, 1])
    table = np.array([[50, 3, 2], [4, 1, 40]])
    joint = estimate_from_counts(two, table, prior_bound=0.1)
    np.testing.assert_array_equal(joint.estimate, estimate_from_counts(two, table).estimate)
    assert joint.info["prior_records"] == prior_records(6, table.sum())


MUSHROOM = ROOT / "tests" / "data" / "mushroom.csv"


def release(tmp_path, method, target):
    cfg = infer_schema(MUSHROOM).to_dict()
    cfg.update({"method": method, "target_total": target, **({"sample_m": 2} if method == "sample-m" else {})})
    for c in cfg["columns"]:
        c.pop("epsilon", None)
    out = tmp_path / f"{method}.csv"
    manifest = perturb_file(
        MUSHROOM, ReleaseConfig.from_dict(cfg), out, audit_dir=tmp_path, allow_rare_categories=True
    ).manifest
    return out, manifest


def test_an_smp_release_of_skewed_columns_lowers_the_prior_from_every_column(tmp_path, capsys):
    """Mushroom's 22 columns are far from uniform (many near-empty categories); an SMP release at whole-record
    epsilon 2 carries about 370 reports per column, enough to show it: every 1-way estimate of the release uses
    the same bound, read from all columns, and says so; joint tables and the other estimators are unchanged."""
    out, manifest = release(tmp_path, "smp", 2.0)
    odor = estimate_release(str(out), ["odor"])
    color = estimate_release(str(out), ["gill-color"])
    for est in (odor, color):
        assert "prior_lowered" in est.info
    assert odor.info["prior_records"] == pytest.approx(color.info["prior_records"], rel=1e-12)
    assert odor.info["prior_records"] < prior_records(9, odor.rows)
    # the bound, recomputed from the release file with the sampling estimator's own per-column operators
    from optrr_engine.estimation.release_source import mechanism_from_manifest
    from optrr_engine.estimation.sampled import SamplingCounter, marginal_operator
    from optrr_engine.sampling import NOT_REPORTED

    design = mechanism_from_manifest(manifest)
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    names = [a["name"] for a in manifest["attributes"]]
    codes = np.full((len(frame), len(names)), NOT_REPORTED)
    for j, a in enumerate(manifest["attributes"]):
        lookup = {c: i for i, c in enumerate(a["categories"])}
        codes[:, j] = [lookup.get(v, NOT_REPORTED) for v in frame[a["name"]]]
    tables = []
    for j in range(len(names)):
        counter = SamplingCounter(design, [j])
        counter.add(codes)
        tables.append((marginal_operator(design, [j], counter.subset_rows), counter.counter.table))
    assert odor.info["prior_records"] == pytest.approx(one_way_prior_bound(tables), rel=1e-9)
    assert "prior_lowered" not in estimate_release(str(out), ["odor"], method="ibu").info
    assert main(["estimate", str(out), "--marginal", "odor"]) == 0
    assert "the release, over all its columns, is further from uniform" in capsys.readouterr().out


def test_a_mechanism_release_bounds_its_one_way_prior_from_every_column(tmp_path):
    """A release every row reports: the 1-way estimate's prior is the bound of all of its columns' tables."""
    out, manifest = release(tmp_path, "auto", 4.0)
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    from optrr_engine.estimation.release_source import mechanism_from_manifest

    mech = mechanism_from_manifest(manifest)
    tables = []
    for j, a in enumerate(manifest["attributes"]):
        lookup = {c: i for i, c in enumerate(a["categories"])}
        codes = np.array([lookup[v] for v in frame[a["name"]]])
        tables.append((mech.marginal([j]), np.bincount(codes, minlength=len(a["categories"]))))
    bound = one_way_prior_bound(tables)
    est = estimate_release(str(out), ["cap-color"])
    assert bound is not None and bound < prior_records(10, est.rows)  # mushroom's columns are far from uniform
    assert est.info["prior_records"] == pytest.approx(bound, rel=1e-9) and "prior_lowered" in est.info
    j = [a["name"] for a in manifest["attributes"]].index("cap-color")
    again = estimate_from_counts(mech.marginal([j]), tables[j][1], prior_bound=bound)
    np.testing.assert_allclose(est.estimate, again.estimate, atol=1e-12)
    pair = estimate_release(str(out), ["cap-color", "odor"])
    assert pair.info["prior_records"] == prior_records(pair.estimate.size, pair.rows)
    # a column the file lacks, or one holding a label outside its categories, is left out of the bound; the column
    # asked for is still estimated (it used to fail because of the other column)
    names = [a["name"] for a in manifest["attributes"]]
    trimmed = tmp_path / "trimmed.csv"
    frame.drop(columns=["odor"]).to_csv(trimmed, index=False)
    (tmp_path / "trimmed.csv.manifest.json").write_text((tmp_path / "auto.csv.manifest.json").read_text())
    without = one_way_prior_bound(t for j, t in enumerate(tables) if names[j] != "odor")
    est = estimate_release(str(trimmed), ["cap-color"], check_hash=False)
    assert est.info["prior_records"] == pytest.approx(min(prior_records(10, est.rows), without), rel=1e-9)
    bad = frame.copy()
    bad.loc[0, "odor"] = "not a category"
    bad.to_csv(trimmed, index=False)
    est = estimate_release(str(trimmed), ["cap-color"], check_hash=False)
    assert est.info["prior_records"] == pytest.approx(min(prior_records(10, est.rows), without), rel=1e-9)
    with pytest.raises(InputError, match="not one of the manifest's categories"):
        estimate_release(str(trimmed), ["odor"], check_hash=False)  # the column asked for must be readable


def test_a_column_of_pure_noise_or_an_erased_one_is_left_out_of_the_bound():
    """One column at eps 0.02 beside fifteen skewed ones at eps 2 used to switch the bound off (its noise drowned
    S); an erased column (eigenvalue 0) carries nothing. Both are left out; the erased column's own estimate is
    uniform whatever the prior, and says nothing about a lowered prior."""
    from optrr_engine.estimation.operator import StructuredOperator

    rng = np.random.default_rng(4)
    mech = grr(6, 2.0)
    m = dense_matrix(mech)
    tables = []
    for _ in range(15):
        data = rng.multinomial(2000, rng.dirichlet(np.full(6, 0.5)))
        tables.append((mech, sum(rng.multinomial(int(c), m[:, x]) for x, c in enumerate(data))))
    bound = one_way_prior_bound(tables)
    assert bound is not None and bound < 6
    noisy = grr(6, 0.02)
    counts = rng.multinomial(2000, np.full(6, 1 / 6))
    assert spread_term(noisy, counts) is None
    assert one_way_prior_bound([*tables, (noisy, counts)]) == pytest.approx(bound, rel=1e-12)
    erased = StructuredOperator((4,), np.array([1.0, 0.0]))
    assert spread_term(erased, np.array([10, 20, 30, 40])) is None
    est = estimate_from_counts(erased, np.array([10, 20, 30, 40]), prior_bound=0.0)
    np.testing.assert_allclose(est.estimate, 0.25, atol=1e-9)
    assert "not_identifiable" in est.info and "prior_lowered" not in est.info


@pytest.mark.parametrize("method", ["rsfd", "sample-m"])
def test_rsfd_and_sample_m_releases_bound_their_one_way_prior_from_every_column(tmp_path, method):
    """The other sampling designs: every column's 1-way counter enters (RS+FD: the fakes are in the channel), and
    two columns get the same bound."""
    out, manifest = release(tmp_path, method, 4.0)
    from optrr_engine.estimation.release_source import mechanism_from_manifest
    from optrr_engine.estimation.sampled import OneWayCounters, sampled_codes_prior_bound
    from optrr_engine.sampling import NOT_REPORTED

    design = mechanism_from_manifest(manifest)
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    codes = np.full((len(frame), design.k), NOT_REPORTED)
    for j, a in enumerate(manifest["attributes"]):
        lookup = {c: i for i, c in enumerate(a["categories"])}
        codes[:, j] = [lookup.get(v, NOT_REPORTED) for v in frame[a["name"]]]
    bound = sampled_codes_prior_bound(design, codes)
    assert bound is not None
    one = estimate_release(str(out), ["odor"])
    two = estimate_release(str(out), ["gill-color"])
    assert one.info["prior_records"] == pytest.approx(min(prior_records(9, one.rows), bound), rel=1e-9)
    assert two.info["prior_records"] == pytest.approx(min(prior_records(12, two.rows), bound), rel=1e-9)
    counters = OneWayCounters(design)
    counters.add(codes[:1000])
    counters.add(codes[1000:])  # chunks add up
    assert [c.counter.table.sum() for c in counters.counters] == [
        int((codes[:, j] != NOT_REPORTED).sum()) for j in range(design.k)
    ]


def test_the_json_output_says_the_prior_it_used(tmp_path, capsys):
    import json

    out, _ = release(tmp_path, "smp", 2.0)
    assert main(["estimate", str(out), "--marginal", "odor", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["info"]
    assert info["prior_records"] < 9 and "pseudo-records" in info["prior_lowered"]


def test_the_comparison_estimates_one_way_tables_with_the_release_bound(monkeypatch):
    """compare_designs (the Compare tab's designs at your epsilon, optrr compare) passes each release's bound to
    every 1-way default estimate, the bound of that release's codes, and none to the joint tables."""
    import optrr_engine.compare.designs_on_data as dod
    from optrr_engine.compare.datasets import load_dataset

    data = load_dataset(str(MUSHROOM))
    seen = []
    original = dod.estimate_marginal

    def spy(cand, released, sizes, attrs, method="map", prior_bound=None):
        if len(attrs) == 1:
            seen.append((prior_bound, dod.released_prior_bound(cand, released, sizes)))
        else:
            assert prior_bound is None or len(attrs) == 1
        return original(cand, released, sizes, attrs, method, prior_bound)

    monkeypatch.setattr(dod, "estimate_marginal", spy)
    dod.compare_designs(data.codes[:, :8], data.sizes[:8], 2.0, ways=(1,), sets=8, repetitions=1, seed=3)
    assert seen and all(b == pytest.approx(expected) if expected is not None else b is None for b, expected in seen)
    assert any(b is not None for b, _ in seen)


def test_the_release_preview_bounds_its_one_way_prior_by_every_column_and_keeps_each_columns_picture():
    """The Compare tab's release preview (its worker job): the shown estimates use the bound of every column's
    simulated perturbation, and each column draws from its own stream of the preview's seed, so its picture does
    not change with the columns ticked (they used to share one stream)."""
    from optrr_engine.release.codec import Codec
    from optrr_gui.workers.jobs.compare import release_preview

    cfg = infer_schema(MUSHROOM)
    cfg.method = "kronecker"
    codec = Codec(cfg)
    mech = run_design("kronecker", list(codec.sizes), [1.0] * len(codec.sizes)).mechanism
    config = cfg.to_dict()
    one = release_preview(str(MUSHROOM), {}, config, mech, ["odor"])
    three = release_preview(str(MUSHROOM), {}, config, mech, ["class", "gill-color", "odor"])
    np.testing.assert_array_equal(one["frames"][0]["estimated"], three["frames"][2]["estimated"])
    np.testing.assert_array_equal(
        one["frames"][0]["simulated_perturbed"], three["frames"][2]["simulated_perturbed"]
    )
    j = list(codec.attributes).index("odor")
    observed = np.round(one["frames"][0]["simulated_perturbed"].to_numpy() * one["rows"]).astype(int)
    plain = estimate_from_counts(mech.marginal([j]), observed)
    assert not np.allclose(one["frames"][0]["estimated"], plain.estimate, atol=1e-6)  # the bound lowered the prior
    unbounded = release_preview(str(MUSHROOM), {}, config, mech, ["odor"], estimator="ibu")
    np.testing.assert_array_equal(
        unbounded["frames"][0]["simulated_perturbed"], one["frames"][0]["simulated_perturbed"]
    )


def test_the_information_warning_of_an_estimate_whose_prior_was_lowered_does_not_say_it_is_the_prior():
    """"Close to uniform (the prior) whatever the data" is the default estimate's effect under its full prior; with
    the prior lowered the estimate follows the data more, so the warnings use the other estimates' words."""
    from types import SimpleNamespace

    from optrr_engine.utility.release_check import NO_INFORMATION_EFFECT, effect_of

    assert effect_of(SimpleNamespace(method="map", info={})) == "map"
    lowered = SimpleNamespace(method="map", info={"prior_lowered": "..."})
    assert effect_of(lowered) == "estimate"
    assert NO_INFORMATION_EFFECT[effect_of(lowered)] != NO_INFORMATION_EFFECT["map"]
    assert effect_of(SimpleNamespace(method="ibu", info={})) == "ibu"


def test_the_preview_says_where_the_prior_was_lowered():
    """The Compare tab's preview words the lowered prior under its figure (optrr_gui.compare.view.prior_note), from
    the job's frames; nothing when no drawn column's prior was lowered."""
    from optrr_engine.release.codec import Codec
    from optrr_gui.compare.view import prior_note
    from optrr_gui.workers.jobs.compare import release_preview

    cfg = infer_schema(MUSHROOM)
    cfg.method = "kronecker"
    codec = Codec(cfg)
    mech = run_design("kronecker", list(codec.sizes), [1.0] * len(codec.sizes)).mechanism
    frames = release_preview(str(MUSHROOM), {}, cfg.to_dict(), mech, ["odor", "class"])["frames"]
    assert frames[0]["prior_lowered"].iat[0] and frames[0]["prior_records"].iat[0] < 9
    note = prior_note(frames)
    assert f"lowered to {frames[0]['prior_records'].iat[0]:.3g} pseudo-records on <b>odor</b>" in note
    ibu = release_preview(str(MUSHROOM), {}, cfg.to_dict(), mech, ["odor"], estimator="ibu")["frames"]
    assert prior_note(ibu) == "" and not ibu[0]["prior_lowered"].iat[0]


def test_the_cli_always_says_the_prior_it_used(tmp_path, capsys):
    """A reviewer saw the formula but not the number when the prior was not lowered: nursery's uniform columns."""
    from tests.conftest import ROOT as root

    data = root / "tests" / "data" / "nursery.csv"
    cfg = infer_schema(data).to_dict()
    cfg.update({"method": "smp", "target_total": 2.0})
    out = tmp_path / "n.csv"
    perturb_file(data, ReleaseConfig.from_dict(cfg), out, audit_dir=tmp_path, allow_rare_categories=True)
    assert main(["estimate", str(out), "--marginal", "parents"]) == 0
    text = capsys.readouterr().out
    assert "prior: 3 pseudo-records, uniform" in text and "lowered" not in text
