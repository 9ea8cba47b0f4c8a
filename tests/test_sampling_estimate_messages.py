"""What estimates from sampling releases (smp, sample-m, rsfd) say: the refusal when no record reports a marginal,
RS+FD's joint marginals in the predicted error, the few-rows warning per method, and what the records carry."""

import json

import numpy as np
import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.estimation.estimate import estimate_from_counts, few_rows
from optrr_engine.estimation.sampled import estimate_sampled_codes
from optrr_engine.release.config import ReleaseConfig
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import infer_schema
from optrr_engine.sampling import NOT_REPORTED, make_sampling_design
from optrr_engine.utility.sampling import SamplingCandidate
from tests.conftest import ROOT

#: breast_cancer's category counts (10 attributes)
BREAST = [2, 6, 3, 11, 7, 3, 3, 2, 6, 2]


# -- A: a subset the design can report, but no row of this release did ------------------------------------------
def test_sample_m_subset_with_no_rows_says_the_design_can_and_how_many_were_expected():
    design = make_sampling_design("sample-m", BREAST, 1.0, m=3)
    released = np.full((286, 10), NOT_REPORTED)
    released[:, 3:6] = 0  # every row happened to sample columns 4, 5, 6
    with pytest.raises(InputError) as err:
        estimate_sampled_codes(design, released, [0, 1, 7])
    text = str(err.value)
    assert "choose at most 3" not in text  # the user did: 3 attributes the design samples together
    assert "the design can report them together" in text and "none of its 286 records did" in text
    assert "about 2.38 were expected" in text  # 286 * C(7, 0) / C(10, 3) = 286 / 120
    assert "larger release" in text and "larger m" in text


def test_more_attributes_than_a_row_carries_keeps_its_refusal():
    design = make_sampling_design("sample-m", BREAST, 1.0, m=3)
    released = np.full((50, 10), NOT_REPORTED)
    released[:, :3] = 0
    with pytest.raises(InputError, match="choose at most 3 attributes that are sampled together"):
        estimate_sampled_codes(design, released, [0, 1, 2, 3])
    smp = make_sampling_design("smp", [2, 3, 2], 1.0)
    one = np.full((30, 3), NOT_REPORTED)
    one[:, 0] = 0
    with pytest.raises(InputError, match="so choose 1 attribute$"):
        estimate_sampled_codes(smp, one, [0, 1])
    # a weight of 0: the design never samples the attribute, whatever the release
    weighted = make_sampling_design("smp", [2, 3, 2], 1.0, weights=[1, 0, 1])
    with pytest.raises(InputError, match="never samples this attribute"):
        estimate_sampled_codes(weighted, one, [1])


# -- B: RS+FD's joint marginals are not estimable, exactly as SMP's ----------------------------------------------
def test_rsfd_joint_marginals_are_erased_like_smp_ones():
    marginals = {"orders": [1, 2]}
    smp = SamplingCandidate(make_sampling_design("smp", [2, 3, 2], 1.0)).predicted_error(10000, marginals)
    rsfd = SamplingCandidate(make_sampling_design("rsfd", [2, 3, 2], 1.0)).predicted_error(10000, marginals)
    for res in (smp, rsfd):
        joint = [m for m in res.marginals if len(m.attributes) == 2]
        assert len(joint) == 3
        for m in joint:
            assert m.erased and not m.identifiable and m.rows == 0.0
            assert m.expected_avd_default == np.inf and m.reason.startswith("never reported")
        order2 = res.to_json()["by_order"]["2"]
        assert order2["mean_expected_avd_default"] is None and order2["erased"] == 3
        assert res.rank_key()[0] == 3 and res.default_score() == np.inf
    assert "one attribute" in [m for m in rsfd.marginals if len(m.attributes) == 2][0].reason
    # the 1-way marginals keep their predicted errors
    assert all(np.isfinite(m.expected_avd_default) for m in rsfd.marginals if len(m.attributes) == 1)


def test_design_ranking_shows_rsfd_joint_like_smp(capsys):
    assert main(["design", "--sizes", "2,3,2", "--target-total", "1", "--marginals", "1,2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    text = json.dumps(out)
    assert "rsfd" in text and "smp" in text
    assert main(["design", "--method", "rsfd", "--sizes", "2,3,2", "--target-total", "1", "--json"]) == 0
    pred = json.loads(capsys.readouterr().out)["predicted_error"]
    assert pred["by_order"]["2"]["mean_expected_avd_default"] is None
    assert main(["design", "--sizes", "2,3,2", "--target-total", "1", "--marginals", "1,2"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert rows["rsfd"][2] == "-" and rows["smp"][2] == "-"  # exp. AVD (default): not estimable for both


# -- C: the few-rows warning names what happens to the chosen estimate -------------------------------------------
def test_few_rows_wording_follows_the_method():
    assert few_rows(60, 12, "unbiased") is None
    assert "leans on its prior" in few_rows(48, 12, "map") and few_rows(48, 12) == few_rows(48, 12, "map")
    for method in ("unbiased", "clip", "ibu"):
        text = few_rows(48, 12, method)
        assert isinstance(text, str) and "leans on" not in text, method
        assert "only 48 records report this table for 12 cells" in text and "normal approximation" in text
    mech = make_sampling_design("smp", [3, 4], 1.0).inner[1]  # GRR on 4 categories
    counts = np.full(4, 2.0)  # 8 records, 4 cells
    unbiased = estimate_from_counts(mech, counts, method="unbiased").info["few_rows"]
    assert "leans on" not in unbiased and "no prior" in unbiased
    assert "leans on its prior" in estimate_from_counts(mech, counts, method="map").info["few_rows"]


# -- D: what the records carry, in text and JSON -----------------------------------------------------------------
def test_rsfd_and_smp_say_what_the_records_carry():
    rng = np.random.default_rng(4)
    sizes = [3, 4, 2, 2]
    data = np.stack([rng.integers(0, a, 2000) for a in sizes], axis=1)
    rsfd = make_sampling_design("rsfd", sizes, 1.0)
    est = estimate_sampled_codes(rsfd, rsfd.sample(data, rng), [1])
    assert est.info["records_reporting_all"] == 2000 and est.info["records_total"] == 2000
    assert "subset_rows" not in est.info  # which value is real is not marked: no per-subset count to give
    assert est.info["expected_real_reports"] == pytest.approx(500.0)  # n / k
    assert "only about 500.0 of them (n x 1/4) carry its real (randomized) value" in est.info["reporting"]

    sample = make_sampling_design("sample-m", sizes, 1.0, m=2)
    est = estimate_sampled_codes(sample, sample.sample(data, rng), [0])
    assert len(est.info["subset_rows"]) == 6  # every subset, in the manifest's order (optrr analyze reads it)
    listed = est.info["reporting_subsets"]
    assert len(listed) == 3 and all(1 in s["columns"] for s in listed)  # only the subsets holding column 1
    assert sum(s["rows"] for s in listed) == est.info["records_reporting_all"]
    assert all(s["expected_rows"] == pytest.approx(2000 / 6) for s in listed)
    assert est.info["expected_records_reporting_all"] == pytest.approx(1000.0)


def test_cli_estimate_text_and_json_for_rsfd_and_smp(tmp_path, capsys):
    data = ROOT / "tests" / "data" / "car.csv"
    outs = {}
    for method in ("rsfd", "smp"):
        cfg = infer_schema(data).to_dict()
        cfg.update({"method": method, "target_total": 1.5})
        for c in cfg["columns"]:
            c.pop("epsilon", None)
        (tmp_path / method).mkdir()
        outs[method] = out = tmp_path / method / f"{method}.csv"
        perturb_file(data, ReleaseConfig.from_dict(cfg), out, audit_dir=tmp_path / method)
    assert main(["estimate", str(outs["rsfd"]), "--marginal", "buying"]) == 0
    text = capsys.readouterr().out
    assert "1,728 of 1,728 records report" not in text
    assert "all 1,728 records carry a value of buying, but only about 246.9 of them (n x 1/7)" in text
    assert main(["estimate", str(outs["rsfd"]), "--marginal", "buying", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["info"]
    assert "subset_rows" not in info and info["expected_real_reports"] == pytest.approx(1728 / 7)
    assert main(["estimate", str(outs["smp"]), "--marginal", "buying", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["info"]
    assert [s["columns"] for s in info["reporting_subsets"]] == [["buying"]]
    assert info["reporting_subsets"][0]["rows"] == info["records_reporting_all"] > 0
    assert len(info["subset_rows"]) == 7  # kept for optrr analyze, every subset in the manifest's order
    assert main(["analyze", str(outs["smp"]), "--chi2", "buying,class"]) == 2  # SMP: never reported together
    capsys.readouterr()
