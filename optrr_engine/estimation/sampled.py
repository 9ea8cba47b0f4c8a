"""Estimating a marginal from a sampling release (docs/sampling.md; designs in optrr_engine.sampling).

``smp`` / ``sample-m``: the marginal on attributes A is estimated from the records that report every
attribute of A. Such a record with subset S has y_A distributed as the inner mechanism M_S induced on A, which
is pattern-structured on A; pooled over the subsets (n_S records each, N in all), the expected frequencies
are sum_S (n_S / N) M_{S,A} pi, again pattern-structured with eigenvalues sum_S (n_S / N) lambda_T(M_{S,A}).
The usual estimators (maximum likelihood by default, unbiased for intervals) then run on that operator.

``rsfd``: every record carries every attribute; on A the channel is a mixture over the sampled attribute j:
GRR on j (eigenvalue p_j - q_j on its contrast) and uniform fakes elsewhere (eigenvalue 0), so
lambda_{{i}} = w_i (p_i - q_i), lambda_T = 0 for |T| >= 2: 1-way marginals only. The unbiased estimate is
then Arcolezi et al.'s estimator pi_hat = (f - q~) / (p~ - q~), p~ = w p + (1 - w) / a, q~ = w q + (1 - w) / a.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..errors import InputError
from ..sampling import NOT_REPORTED, SamplingDesign
from .counts import StreamingCounter
from .estimate import DEFAULT_METHOD, estimate_from_counts
from .operator import StructuredOperator
from .spectrum import mechanism_eigenvalues


def _subset_codes(design: SamplingDesign) -> tuple[np.ndarray, np.ndarray]:
    """(sorted mixed-radix codes of the subsets, their subset indices)."""
    k = design.k
    codes = np.array([sum(int(c) * k ** (design.m - 1 - t) for t, c in enumerate(s)) for s in design.subsets])
    order = np.argsort(codes)
    return codes[order], order


class SamplingCounter:
    """Counts of the reported marginal on ``attrs`` and, per subset, the rows that report all of ``attrs``."""

    def __init__(self, design: SamplingDesign, attrs):
        self.design = design
        self.attrs = [int(a) for a in attrs]
        if design.fills_fakes and len(self.attrs) > 1:
            raise InputError(
                "an RS+FD release supports 1-way marginals only: each record holds one true (randomized) value, "
                "the others are fakes, so joint distributions cannot be recovered"
            )
        self.counter = StreamingCounter(design.sizes[self.attrs])
        self.subset_rows = np.zeros(len(design.subsets), dtype=np.int64)
        self._codes, self._index = _subset_codes(design)
        self.rows_seen = 0

    def add(self, out: np.ndarray) -> None:
        """Add a chunk of released codes (n, k) with NOT_REPORTED in cells a record does not report."""
        out = np.asarray(out)
        self.rows_seen += out.shape[0]
        if self.design.fills_fakes:
            self.counter.add(out[:, self.attrs])
            return
        reported = reported_cells(self.design, out)
        rows = np.flatnonzero(reported[:, self.attrs].all(axis=1))
        if rows.size == 0:
            return
        self.subset_rows += np.bincount(
            row_subsets(self.design, reported[rows], self._codes, self._index), minlength=len(self.design.subsets)
        )
        self.counter.add(out[np.ix_(rows, np.asarray(self.attrs, dtype=np.int64))])


def reported_cells(design: SamplingDesign, out: np.ndarray) -> np.ndarray:
    """Which cells of a chunk of released codes are reported (not NOT_REPORTED); every row must report exactly the
    design's m attributes."""
    reported = out != NOT_REPORTED
    counts = reported.sum(axis=1)
    if np.any(counts != design.m):
        raise InputError(
            f"a row of the release reports {int(counts[counts != design.m][0])} attributes; this design "
            f"reports exactly {design.m} per row: the file does not match its manifest"
        )
    return reported


def row_subsets(design: SamplingDesign, reported: np.ndarray, codes: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The subset of the design (its index) each row of ``reported`` (rows x k, m True per row) reports;
    ``codes``/``index``: :func:`_subset_codes`."""
    cols = np.nonzero(reported)[1].reshape(reported.shape[0], design.m)
    weights = design.k ** np.arange(design.m - 1, -1, -1, dtype=np.int64)
    code = cols.astype(np.int64) @ weights
    pos = np.searchsorted(codes, code)
    if np.any(pos >= codes.size) or np.any(codes[np.minimum(pos, codes.size - 1)] != code):
        raise InputError("a row of the release reports a set of attributes this design never samples")
    return index[pos]


class OneWayCounters:
    """Every attribute's 1-way :class:`SamplingCounter`, filled in one pass per chunk (which cells are reported and
    each row's subset are found once per chunk, not once per attribute): for :func:`sampling_prior_bound`."""

    def __init__(self, design: SamplingDesign):
        self.design = design
        self.counters = [SamplingCounter(design, [j]) for j in range(design.k)]
        self._codes, self._index = _subset_codes(design)

    def add(self, out: np.ndarray) -> None:
        out = np.asarray(out)
        if self.design.fills_fakes:
            for c in self.counters:
                c.add(out)
            return
        reported = reported_cells(self.design, out)
        subsets = row_subsets(self.design, reported, self._codes, self._index)
        for j, c in enumerate(self.counters):
            c.rows_seen += out.shape[0]
            rows = reported[:, j]
            if rows.any():
                c.subset_rows += np.bincount(subsets[rows], minlength=len(self.design.subsets))
                c.counter.add(out[rows][:, [j]])


def no_rows_message(design: SamplingDesign, attrs, rows_total: int | None = None) -> str:
    """Why no record of a release reports all of ``attrs`` together: the design never samples them together
    (more attributes than a row carries, or a sampling weight of 0), or it does but none of the ``rows_total``
    records of this release happened to (then the expected number of such records, n * P(subset holds A))."""
    attrs = [int(a) for a in attrs]
    coverage = design.coverage(attrs)
    if len(attrs) > design.m or coverage <= 0:
        if len(attrs) <= design.m:  # a weight of 0 keeps an attribute (or these together) out of every subset
            what = "this attribute (its sampling weight is 0)" if len(attrs) == 1 else "these attributes together"
            return (
                f"no record of the release reports all of these attributes together: this design never samples {what}; "
                f"{design.suppression_text()}"
            )
        which = "1 attribute" if design.m == 1 else f"at most {design.m} attributes that are sampled together"
        return (
            "no record of the release reports all of these attributes together; "
            f"{design.suppression_text()}, so choose {which}"
        )
    records = "records" if rows_total is None else f"{int(rows_total):,} records"
    expected = "" if rows_total is None else f" (about {float(rows_total) * coverage:.3g} were expected)"
    bigger = ", or a larger m (more columns per row)," if design.method == "sample-m" else ""
    return (
        "no record of this release happens to report all of these attributes together: the design can report them "
        f"together (a record's sampled columns hold them all with probability {coverage:.3g}), but none of its "
        f"{records} did{expected}: {design.suppression_text()}. A larger release{bigger} would give such records; "
        "or estimate fewer attributes at once"
    )


def marginal_operator(
    design: SamplingDesign, attrs, subset_rows=None, rows_total: int | None = None
) -> StructuredOperator:
    """The structured operator of the pooled channel on ``attrs`` (module docstring); ``rows_total`` (the
    release's records) only words the refusal when no record reports ``attrs`` together (:func:`no_rows_message`)."""
    attrs = [int(a) for a in attrs]
    sizes = design.sizes[attrs]
    masks = 1 << len(attrs)
    if design.fills_fakes:
        if len(attrs) > 1:
            raise InputError("an RS+FD release supports 1-way marginals only")
        lam = np.zeros(masks)
        lam[0] = 1.0
        for (j,), w, mech in zip(design.subsets, design.probs, design.inner, strict=True):
            if j == attrs[0]:
                lx = np.exp(mech.log_pattern_probs())
                lam[1] += w * (lx[0] - lx[1])
        return StructuredOperator(sizes, lam)
    rows = np.asarray(subset_rows, dtype=float)
    total = rows.sum()
    if total <= 0:
        raise InputError(no_rows_message(design, attrs, rows_total))
    lam = np.zeros(masks)
    for s in np.flatnonzero(rows):
        n_s = rows[s]
        subset = list(design.subsets[s])
        local = [subset.index(a) for a in attrs]
        mech = design.inner[s]  # inner mechanisms are shared by subsets of equal category counts: computed once
        lam += (n_s / total) * design.memo(("eigenvalues", id(mech), tuple(local)), partial(_eigenvalues, mech, local))
    return StructuredOperator(sizes, lam)


def _eigenvalues(mechanism, positions) -> np.ndarray:
    return mechanism_eigenvalues(mechanism.marginal(positions))


def estimate_sampling_counts(
    design: SamplingDesign, counter: SamplingCounter, method: str = DEFAULT_METHOD, column_names=None, **kwargs
):
    """MarginalEstimate of the counter's attributes; ``info`` says how many records reported them
    (:func:`reporting_info`; ``column_names``: every column of the release, to name the subsets)."""
    op = marginal_operator(design, counter.attrs, counter.subset_rows, counter.rows_seen)
    est = estimate_from_counts(op, counter.counter.table, method=method, **kwargs)
    est.info.update(reporting_info(design, counter, kwargs.get("attributes"), column_names))
    return est


def reporting_info(design: SamplingDesign, counter: SamplingCounter, attributes=None, names=None) -> dict:
    """What the records of a sampling release carry about the counter's attributes, for ``MarginalEstimate.info``:
    ``records_reporting_all`` (records holding a value of every one of them; for RS+FD every record, real or
    fake), ``records_total``, ``suppression``, ``reporting`` (a plain sentence saying what is true), and

    - SMP / sample-m: ``expected_records_reporting_all`` (n * P(a record's subset holds them)), ``subset_rows``
      (rows per subset of the design, in the order of the manifest's ``mechanism.subsets``, read back by
      ``optrr analyze``: only subsets holding all of the attributes are counted, the others are 0 by construction)
      and ``reporting_subsets`` (only the subsets holding them: their columns, rows and expected rows);
    - RS+FD (1-way): ``expected_real_reports``, n * w_j, the records expected to carry the attribute's real
      (randomized) value; the others carry a uniform fake one. No ``subset_rows``: which value is real is not
      marked, so no record can be attributed to a subset."""
    n = int(counter.rows_seen)
    reporting = int(counter.counter.rows)
    labels = list(attributes) if attributes else [f"column {a + 1}" for a in counter.attrs]
    what = ", ".join(str(a) for a in labels)
    info: dict = {
        "sampling_method": design.method,
        "records_reporting_all": reporting,
        "records_total": n,
        "suppression": design.suppression_text(),
    }
    if design.fills_fakes:
        (j,) = counter.attrs
        weight = float(sum(w for s, w in zip(design.subsets, design.probs, strict=True) if tuple(s) == (j,)))
        real = n * weight
        info["expected_real_reports"] = real
        share = f"1/{design.k}" if np.isclose(weight, 1.0 / design.k) else f"its sampling weight {weight:.3g}"
        info["reporting"] = (
            f"all {n:,} records carry a value of {what}, but only about {real:,.1f} of them (n x {share}) carry its "
            "real (randomized) value; the others carry a uniform fake value, and which is which is not marked (the "
            "estimate accounts for the fakes)"
        )
        return info
    coverage = design.coverage(counter.attrs)
    info["expected_records_reporting_all"] = n * coverage
    info["subset_rows"] = [int(v) for v in counter.subset_rows]
    need = set(counter.attrs)
    info["reporting_subsets"] = [
        {
            "columns": [names[i] if names else i + 1 for i in sub],
            "rows": int(counter.subset_rows[s]),
            "expected_rows": n * float(w),
        }
        for s, (sub, w) in enumerate(zip(design.subsets, design.probs, strict=True))
        if need <= set(sub) and w > 0
    ]
    together = "" if len(counter.attrs) == 1 else " together"
    verb = "reports" if reporting == 1 else "report"
    info["reporting"] = (
        f"{reporting:,} of {n:,} record{'s' if n != 1 else ''} {verb} {what}{together} (the design expects about "
        f"{n * coverage:,.1f}: a record's "
        f"sampled columns hold {'it' if len(counter.attrs) == 1 else 'them'} with probability {coverage:.3g})"
    )
    return info


def sampling_prior_bound(counters: OneWayCounters) -> float | None:
    """The release's bound A_up on the 1-way prior weight (``pooled_prior``) from its 1-way counters; an attribute
    no record reports is left out."""
    from .pooled_prior import one_way_prior_bound

    tables = []
    for c in counters.counters:
        try:
            op = marginal_operator(counters.design, c.attrs, c.subset_rows, c.rows_seen)
        except InputError:
            continue
        tables.append((op, c.counter.table))
    return one_way_prior_bound(tables)


def estimate_sampled_codes(
    design: SamplingDesign, released: np.ndarray, attrs, method: str = DEFAULT_METHOD, prior_bound=None, **kw
):
    """Estimate the marginal on ``attrs`` from released codes held in memory (``prior_bound``: the release's
    A_up, :func:`sampled_codes_prior_bound`)."""
    counter = SamplingCounter(design, attrs)
    counter.add(released)
    return estimate_sampling_counts(design, counter, method=method, prior_bound=prior_bound, **kw)


def sampled_codes_prior_bound(design: SamplingDesign, released: np.ndarray) -> float | None:
    """A_up (``pooled_prior``) of released codes held in memory."""
    counters = OneWayCounters(design)
    counters.add(released)
    return sampling_prior_bound(counters)


def estimate_sampling_release(release_path, manifest, design, names, method, confidence, progress=None, cancel=None):
    """Estimate the marginal on ``names`` from a sampling release (file streamed chunk by chunk)."""
    import os

    from ..tasks import TaskControl
    from .release_source import attribute_index, check_rows, iter_code_chunks

    ctl = TaskControl(progress, cancel)
    idx = attribute_index(manifest, names)
    names = [str(a["name"]) for a in manifest["attributes"]]
    cats = [[str(c) for c in a["categories"]] for a in manifest["attributes"]]
    marker = manifest["mechanism"].get("not_reported_label")
    # a 1-way default estimate needs every column's counts (the prior's bound): its own counter is one of them
    pooled = OneWayCounters(design) if method == DEFAULT_METHOD and len(idx) == 1 else None
    counter = pooled.counters[idx[0]] if pooled is not None else SamplingCounter(design, idx)
    total = manifest.get("rows")
    for codes in iter_code_chunks(release_path, names, cats, marker):
        ctl.check()
        if pooled is not None:
            pooled.add(codes)  # (counter among them)
        else:
            counter.add(codes)
        if total:
            ctl.report(0.8 * counter.rows_seen / float(total), f"counted {counter.rows_seen:,} rows")
    check_rows(manifest, counter.rows_seen)
    est = estimate_sampling_counts(
        design,
        counter,
        method=method,
        confidence=confidence,
        attributes=[names[i] for i in idx],
        categories=[cats[i] for i in idx],
        progress=ctl.sub(0.8, 1.0).progress,
        cancel=cancel,
        column_names=names,
        prior_bound=sampling_prior_bound(pooled) if pooled is not None else None,
    )
    est.info["release"] = os.path.basename(release_path)
    est.info["whole_record_epsilon"] = design.whole_record_epsilon()
    est.info["attribute_epsilons"] = [float(e) for e in design.attribute_epsilons()[idx]]
    return est
