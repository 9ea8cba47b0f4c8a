"""The HTML release report of designs asked for by a whole-record target (sampling designs, total-budget mode):
what was asked, and what a column's achieved epsilon bounds (docs/sampling.md, "What eps_i bounds")."""

import copy
import math
import re

import numpy as np
import pytest

from optrr_engine.dense import dense_matrix
from optrr_engine.release.config import ReleaseConfig
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.report import render_report
from optrr_engine.release.schema import infer_schema
from optrr_engine.sampling.design import rsfd_design, sample_m_design
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "car.csv"
TARGET_ROW = "<tr><th>Requested</th><td>whole-record epsilon <span class=num>1.5</span>"
WHOLE_RECORD_CLAUSE = (
    "any change of one record, including a change of this attribute alone with all the others known, is bounded by "
    "the whole-record epsilon (1.5)"
)


def release(tmp_path, method, target=1.5, **extra):
    """Release tests/data/car.csv (7 attributes, sizes 4, 4, 4, 3, 3, 3, 4); per-column epsilons 1 when
    ``target`` is None. Returns the manifest, the external report and the internal report."""
    cfg = infer_schema(DATA).to_dict()
    cfg.update({"method": method, "target_total": target, **extra})
    if target is not None:
        for c in cfg["columns"]:
            c.pop("epsilon", None)
    folder = tmp_path / method
    folder.mkdir()
    out = folder / f"{method}.csv"
    manifest = perturb_file(DATA, ReleaseConfig.from_dict(cfg), out, audit_dir=folder).manifest
    external = (folder / f"{method}.csv.report.html").read_text(encoding="utf-8")
    (internal_path,) = folder.glob("*.internal-report.html")
    return manifest, external, internal_path.read_text(encoding="utf-8")


def attribute_rows(html: str) -> list[str]:
    table = html[html.index("<h2>Attributes</h2>") :]
    table = table[: table.index("</table>")]
    return re.findall(r"<tr><td>.*?</tr>", table)


def assert_whole_record_request(html: str, n_columns: int = 7) -> None:
    assert "Sum of requested epsilons" not in html
    assert "Requested ε" not in html
    assert TARGET_ROW in html
    assert "(a target for the whole record; the design sets each column's epsilon)" in html
    rows = attribute_rows(html)
    assert len(rows) == n_columns
    for row in rows:  # the category count and the achieved epsilon, nothing else numeric
        assert row.count("<td class=num>") == 2


@pytest.mark.parametrize(
    ("method", "extra"), [("smp", {}), ("sample-m", {"sample_m": 2}), ("rsfd", {})], ids=["smp", "sample-m", "rsfd"]
)
def test_sampling_report_shows_the_whole_record_target_not_per_column_requests(tmp_path, method, extra):
    manifest, external, internal = release(tmp_path, method, **extra)
    assert manifest["mechanism"]["kind"] == "sampling"
    for html in (external, internal):
        assert_whole_record_request(html)
    # the achieved per-column epsilons are still there (RS+FD on buying: 0.250648)
    if method == "rsfd":
        assert "<td class=num>0.250648</td>" in attribute_rows(external)[0]


@pytest.mark.parametrize("method", ["auto", "kronecker"])
def test_total_budget_report_shows_the_target_the_same_way(tmp_path, method):
    manifest, external, internal = release(tmp_path, method)
    assert manifest["design"]["budget"]["target_total"] == 1.5
    for html in (external, internal):
        assert_whole_record_request(html)
        assert "Total-budget mode: target whole-record epsilon 1.5" in html


def test_per_column_request_keeps_the_requested_column_and_its_sum(tmp_path):
    manifest, external, _ = release(tmp_path, "kronecker", target=None)
    assert manifest["design"]["budget"] is None
    assert "<tr><th>Sum of requested epsilons</th><td class=num>7</td></tr>" in external
    assert "<th>Requested ε</th>" in external and TARGET_ROW not in external
    for row in attribute_rows(external):
        assert row.count("<td class=num>") == 3  # categories, requested 1, achieved 1
        assert row.count("<td class=num>1</td>") == 2


def test_budget_share_is_shown_only_when_an_achieved_epsilon_differs_from_it(tmp_path):
    manifest, external, _ = release(tmp_path, "kronecker")
    assert "Share of the target ε" not in external
    changed = copy.deepcopy(manifest)
    share = changed["attributes"][0]["requested_epsilon"]
    changed["attributes"][0]["achieved_epsilon"] = 2 * share
    changed["design"]["epsilon_changes"] = [{"attribute": 0, "requested": share, "achieved": 2 * share}]
    html = render_report(changed)
    assert "<th>Share of the target ε</th>" in html and "Requested ε" not in html
    assert "Sum of requested epsilons" not in html and TARGET_ROW in html
    assert "(raised: weaker privacy)" in attribute_rows(html)[0]
    assert "differ from the column's share of the whole-record target" in html.replace("&#x27;", "'")


@pytest.mark.parametrize(
    ("method", "extra", "specific"),
    [
        ("smp", {}, "so its ε equals the whole-record epsilon"),
        ("sample-m", {"sample_m": 2}, "a row also shows which other columns it reports"),
        ("rsfd", {}, "exactly right only for an attacker to whom every category of the record&#x27;s other attributes "
         "looks equally likely"),
        ("auto", {}, None),
    ],
    ids=["smp", "sample-m", "rsfd", "auto"],
)
def test_report_says_what_a_column_epsilon_bounds(tmp_path, method, extra, specific):
    _, external, internal = release(tmp_path, method, **extra)
    for html in (external, internal):
        text = html.replace("&#x27;", "'")
        assert "What a column's achieved ε bounds." in text
        assert "the channel of that attribute alone" in text
        assert WHOLE_RECORD_CLAUSE in text
        if specific is not None:
            assert specific.replace("&#x27;", "'") in text
        if method == "rsfd":
            assert "per-attribute ε of the RS+FD paper" in text and "is not the column's ε either" in text
        else:
            assert "RS+FD" not in text


def grr(a: int, eps: float) -> np.ndarray:
    p, q = math.exp(eps) / (math.exp(eps) + a - 1), 1 / (math.exp(eps) + a - 1)
    return np.full((a, a), q) + np.eye(a) * (p - q)  # [y, x]


def worst_log_ratio(likelihood: np.ndarray) -> float:
    """max over the outputs (rows) of ln(max / min) over the inputs (columns)."""
    return float(np.log(likelihood.max(axis=1) / likelihood.min(axis=1)).max())


def test_rsfd_wording_numbers_from_a_dense_channel():
    """The report's words about RS+FD, checked on a dense channel built from the definition (a row: attribute j
    with probability 1/k through GRR at the whole-record epsilon, uniform fakes elsewhere): the column's epsilon
    is the channel of the attribute alone, and equals what the whole row says with the others unknown (uniform);
    with the others known, one attribute changed gives more, and at most the whole-record epsilon."""
    sizes, eps = [4, 3, 2], 1.5
    k = len(sizes)
    design = rsfd_design(sizes, eps)
    factors = [[grr(a, eps) if l == j else np.full((a, a), 1 / a) for l, a in enumerate(sizes)] for j in range(k)]
    dense = sum(np.kron(np.kron(f[0], f[1]), f[2]) for f in factors) / k  # row-major: attribute 0 slowest
    tensor = dense.reshape(sizes + sizes)  # y_0, y_1, y_2, x_0, x_1, x_2
    assert worst_log_ratio(dense) == pytest.approx(design.whole_record_epsilon(), rel=1e-9)
    assert design.whole_record_epsilon() == pytest.approx(eps, rel=1e-9)
    column = design.attribute_epsilons()
    for i, a in enumerate(sizes):
        by_xi = np.moveaxis(tensor, k + i, -1)  # ..., x_i last
        others_known = float(np.log(by_xi.max(axis=-1) / by_xi.min(axis=-1)).max())
        x_other = tuple(k + l for l in range(k) if l != i)
        others_uniform = worst_log_ratio(tensor.mean(axis=x_other).reshape(-1, a))
        alone = tensor.sum(axis=tuple(l for l in range(k) if l != i))  # y_i, x_0, x_1, x_2
        alone = alone.mean(axis=tuple(1 + l for l in range(k) if l != i))  # y_i, x_i (it depends on x_i only)
        assert worst_log_ratio(alone) == pytest.approx(column[i], rel=1e-9)
        assert others_uniform == pytest.approx(column[i], rel=1e-9)
        assert column[i] < others_known - 0.05 and others_known < eps


def test_rsfd_on_car_one_attribute_with_the_others_known_exceeds_the_column_epsilon(tmp_path):
    """car at 1.5: buying's column epsilon 0.2506; changing buying with the others known reaches
    ln((w a p + S) / (w a q + S)) = 0.4238 (S = sum over the other attributes of w_j a_j q_j, the smallest
    rest of P(y | x)); the RS+FD paper's ln(1 + (e^1.5 - 1) / 7) = 0.4037 is yet another number."""
    manifest, _, _ = release(tmp_path, "rsfd")
    sizes = manifest["mechanism"]["sizes"]
    k, eps = len(sizes), 1.5
    p = [grr(a, eps)[0, 0] for a in sizes]
    q = [grr(a, eps)[1, 0] for a in sizes]
    rest = sum(sizes[j] * q[j] / k for j in range(1, k))
    others_known = math.log((sizes[0] * p[0] / k + rest) / (sizes[0] * q[0] / k + rest))
    buying = manifest["attributes"][0]
    assert buying["name"] == "buying" and buying["achieved_epsilon"] == pytest.approx(0.2506484, abs=1e-6)
    assert others_known == pytest.approx(0.4238013, abs=1e-6)
    assert math.log(1 + (math.exp(eps) - 1) / k) == pytest.approx(0.4037197, abs=1e-6)
    assert buying["achieved_epsilon"] < others_known < manifest["overall_epsilon"]


def test_sample_m_whole_row_says_more_than_the_column_epsilon():
    """sample-m: the row shows which columns it reports, so even with the others unknown (uniform) the whole row
    can say more about an attribute than its column epsilon (the channel value / not reported, mixed over the
    subsets); with the others known, up to the whole-record epsilon."""
    sizes, eps = [4, 3, 2], 1.5
    design = sample_m_design(sizes, eps, 2)
    column = design.attribute_epsilons()
    uniform, known = np.zeros(len(sizes)), np.zeros(len(sizes))
    for subset, mech in zip(design.subsets, design.inner, strict=True):
        sub = [int(sizes[j]) for j in subset]
        tensor = dense_matrix(mech).reshape(sub + sub, order="F")  # attribute 0 fastest
        for pos, i in enumerate(subset):
            by_xi = np.moveaxis(tensor, len(sub) + pos, -1)
            known[i] = max(known[i], float(np.log(by_xi.max(axis=-1) / by_xi.min(axis=-1)).max()))
            other = tuple(len(sub) + r for r in range(len(sub)) if r != pos)
            uniform[i] = max(uniform[i], worst_log_ratio(tensor.mean(axis=other).reshape(-1, sub[pos])))
    assert (uniform >= column - 1e-9).all() and (uniform > column + 1e-3).any()
    assert (known <= design.whole_record_epsilon() * (1 + 1e-9)).all()
    assert known.max() == pytest.approx(design.whole_record_epsilon(), rel=1e-6)
