"""Sampling designs end to end: perturb a real file (tests/data/nursery.csv), then estimate and analyze."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.estimation import estimate_release
from optrr_engine.mechanism import Mechanism
from optrr_engine.release.config import ReleaseConfig
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import infer_schema
from optrr_engine.sampling import NOT_REPORTED_LABEL
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "nursery.csv"


def release(tmp_path, method, target, **extra):
    cfg = infer_schema(DATA).to_dict()
    cfg.update({"method": method, "target_total": target, **extra})
    for c in cfg["columns"]:
        c.pop("epsilon", None)
    (tmp_path / method).mkdir()
    out = tmp_path / method / f"{method}.csv"
    # nursery.csv: 'class': 'recommend' (2 rows), not these tests' subject
    manifest = perturb_file(
        DATA, ReleaseConfig.from_dict(cfg), out, audit_dir=tmp_path / method, allow_rare_categories=True
    ).manifest
    return out, manifest


def one_way_standard_error(manifest, name, truth, released) -> np.ndarray:
    """Standard errors of the unbiased one-way estimate of attribute ``name`` of an SMP or RS+FD release, from the
    design's definition, not from the estimator. A row's cell reports the true value through GRR (keep p, each
    other category q) with probability r (the subsets holding the attribute); otherwise it is not reported (SMP)
    or a uniform fake value (RS+FD). The observed share of a category is lambda = q + (p - q) pi over the
    reporting rows (SMP), or r (q + (p - q) pi) + (1 - r) / a over all rows (RS+FD); the unbiased estimate is
    linear in it, and the cells are independent draws, so SE <= sqrt(lambda (1 - lambda) / n) / slope."""
    mech = manifest["mechanism"]
    j = [a["name"] for a in manifest["attributes"]].index(name)
    a = mech["sizes"][j]
    (s,) = [s for s, sub in enumerate(mech["subsets"]) if sub == [j]]
    block = mech["inner_mechanisms"][mech["inner_of_subset"][s]]["blocks"][0]
    p, q = np.exp(block["log_keep"][0]), np.exp(block["log_move"][0])
    assert p + (a - 1) * q == pytest.approx(1.0, rel=1e-9)
    r = sum(w for sub, w in zip(mech["subsets"], mech["probabilities"], strict=True) if j in sub)
    if mech.get("fake_values"):
        lam, n, slope = r * (q + (p - q) * truth) + (1 - r) / a, len(released), r * (p - q)
    else:
        lam, n, slope = q + (p - q) * truth, int((released[name] != NOT_REPORTED_LABEL).sum()), p - q
    return np.sqrt(lam * (1 - lam) / n) / slope


def true_table(names):
    raw = pd.read_csv(DATA, dtype=str)
    return raw.groupby(names).size() / len(raw)


def test_sample_m_release_marks_cells_and_estimates_a_two_way_table(tmp_path, capsys):
    out, manifest = release(tmp_path, "sample-m", 2.0, sample_m=2)
    mech = manifest["mechanism"]
    assert mech["kind"] == "sampling" and mech["method"] == "sample-m" and mech["m"] == 2
    assert mech["not_reported_label"] == NOT_REPORTED_LABEL and len(mech["subsets"]) == 36
    assert manifest["overall_epsilon"] <= 2.0 * (1 + 1e-9)
    assert "each row carries 2 of 9 columns" in " ".join(manifest["design"]["notes"])
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(released) == 12960
    assert ((released != NOT_REPORTED_LABEL).sum(axis=1) == 2).all() and not (released == "").any().any()
    report = (tmp_path / "sample-m" / "sample-m.csv.report.html").read_text(encoding="utf-8")
    assert "each row carries 2 of 9 columns" in report

    est = estimate_release(str(out), ["parents", "health"])
    assert est.method == "map" and est.info["converged"] and est.estimate.min() >= 0
    # Rows reporting both: binomial(n, share of the subsets holding both); within 6 standard errors (OS randomness).
    pair = {[a["name"] for a in manifest["attributes"]].index(n) for n in ("parents", "health")}
    both = sum(p for sub, p in zip(mech["subsets"], mech["probabilities"], strict=True) if pair <= set(sub))
    assert both == pytest.approx(1 / 36, rel=1e-9)
    reporting = est.info["records_reporting_all"]
    assert abs(reporting - 12960 * both) <= 6 * np.sqrt(12960 * both * (1 - both))
    shown = (released["parents"] != NOT_REPORTED_LABEL) & (released["health"] != NOT_REPORTED_LABEL)
    assert reporting == int(shown.sum())
    truth = true_table(["parents", "health"])
    labels = est.labels()
    pi = np.array([truth.get((a, b), 0.0) for a in labels[0] for b in labels[1]])
    # OS randomness: bounds from the covariance of the unbiased estimate, computed from the design's definition
    # (a fixed L1 error < 0.5 failed about 1 run in 200 in a simulation of this design). Each reporting row is a
    # random record perturbed by the pair's mechanism P (P[y, x] = X_S, S the attributes where y and x differ), so
    # its output is a categorical draw from lambda = P pi and Cov(unbiased) = P^-1 (diag lambda - lambda lambda^T)
    # P^-T / rows. The unbiased estimate: Mahalanobis distance within chi2(8)'s 1e-8 tail; the maximum-likelihood
    # estimate (IBU, the same asymptotic covariance): every cell within 6 standard errors.
    (subset,) = [s for s, sub in enumerate(mech["subsets"]) if set(sub) == pair]
    inner = Mechanism.from_dict(mech["inner_mechanisms"][mech["inner_of_subset"][subset]])
    log_x, sizes = inner.log_pattern_probs(), inner.sizes
    states = [(x0, x1) for x0 in range(sizes[0]) for x1 in range(sizes[1])]
    P = np.array([[np.exp(log_x[(y[0] != x[0]) | (y[1] != x[1]) << 1]) for x in states] for y in states])
    np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=1e-9)
    lam, inverse = P @ pi, np.linalg.inv(P)
    cov = inverse @ (np.diag(lam) - np.outer(lam, lam)) @ inverse.T / reporting
    gap = (est.unbiased.ravel() - pi)[:-1]  # the cells sum to 1: drop one
    assert gap @ np.linalg.solve(cov[:-1, :-1], gap) <= chi2.isf(1e-8, len(gap))
    se = np.sqrt(np.diag(cov))
    assert np.all(np.abs(est.estimate.ravel() - pi) <= 6 * se), (est.estimate, pi, se)

    assert main(["estimate", str(out), "--marginal", "parents,health"]) == 0
    text = capsys.readouterr().out
    assert "each row carries 2 of 9 columns" in text and "converged in" in text
    assert main(["analyze", str(out), "--chi2", "parents,health", "--json"]) == 0
    tests = {t["test"]: t for t in json.loads(capsys.readouterr().out)["tests"]}
    assert 0 <= tests["wald_on_unbiased_estimate"]["p_value"] <= 1
    assert main(["estimate", str(out), "--marginal", "parents,health,form"]) == 2
    assert "no record of the release reports all" in capsys.readouterr().err


def test_smp_and_rsfd_one_way(tmp_path, capsys):
    truth = true_table(["finance"])
    for method in ("smp", "rsfd"):
        out, manifest = release(tmp_path, method, 1.5)
        assert manifest["overall_epsilon"] == pytest.approx(1.5, rel=1e-9)
        est = estimate_release(str(out), ["finance"])
        # Within 6 standard errors computed from the design's definition (a fixed 0.12 failed about 1 run in 100 for
        # RS+FD, whose standard error here is about 0.06: only 1 record in 9 carries its true finance value); the
        # errors themselves must be small.
        assert np.all(est.std_error < 0.1), est.std_error
        expected = np.array([truth[v] for v in est.labels()[0]])
        released = pd.read_csv(out, dtype=str, keep_default_na=False)
        se = one_way_standard_error(manifest, "finance", expected, released)
        assert np.all(np.abs(est.unbiased - expected) <= 6 * se), (method, est.unbiased, se)
        assert np.all(np.abs(est.estimate - expected) <= 6 * se), (method, est.estimate, se)  # binary: clipped
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert not (released == NOT_REPORTED_LABEL).any().any()  # RS+FD fills fakes
    with pytest.raises(InputError, match="1-way"):
        estimate_release(str(out), ["finance", "health"])


def test_sampling_configuration_is_checked(tmp_path):
    cfg = infer_schema(DATA).to_dict()
    for bad in [{"method": "sample-m", "target_total": 2.0}, {"method": "smp"}, {"method": "auto", "sample_m": 2}]:
        with pytest.raises(InputError):
            ReleaseConfig.from_dict({**cfg, **bad})


def test_cli_refuses_a_needed_marginal_the_design_never_reports(tmp_path, capsys):
    cfg = infer_schema(DATA).to_dict()
    cfg.update({"method": "smp", "target_total": 1.0, "needed_marginals": [["parents", "health"]]})
    for c in cfg["columns"]:
        c.pop("epsilon", None)
    (tmp_path / "cfg.json").write_text(json.dumps(cfg), encoding="utf-8")
    out = tmp_path / "smp.csv"
    assert main(["perturb", str(DATA), "--config", str(tmp_path / "cfg.json"), "-o", str(out)]) == 2
    assert "refusing" in capsys.readouterr().err and not out.exists()
    cfg["needed_marginals"] = [["parents"]]
    (tmp_path / "cfg.json").write_text(json.dumps(cfg), encoding="utf-8")
    rare = "--allow-rare-categories"  # nursery.csv: 'class': 'recommend' (2 rows), not this test's subject
    assert main(["perturb", str(DATA), "--config", str(tmp_path / "cfg.json"), "-o", str(out), rare]) == 0
    err = capsys.readouterr().err
    assert "each row carries 1 of 9 columns" in err and "36 marginal(s) cannot be estimated" in err
