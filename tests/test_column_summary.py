"""Column summaries shown after a data load: counts, shares, missing, rare values, numeric histogram;
checked against plain-Python counting."""

from collections import Counter

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from optrr_engine.release.column_stats import ColumnSummary, merge_value_counts, summarize_coded, summarize_frame


def test_counts_shares_missing_and_rare_match_plain_counting():
    rng = np.random.default_rng(0)
    cells = list(rng.choice(["a", "b", "c", "rare1", "rare2"], 500, p=[0.5, 0.3, 0.192, 0.006, 0.002]))
    cells[::50] = [None] * len(cells[::50])
    s = summarize_frame(pd.DataFrame({"x": cells}))["x"]
    truth = Counter(c for c in cells if c is not None)
    assert s.missing == sum(c is None for c in cells) and s.rows == 500
    assert s.as_dict() == dict(truth)
    assert list(s.counts) == sorted(truth.values(), reverse=True)
    assert np.isclose(s.shares.sum(), 1.0)
    assert s.rare() == sorted(((v, n) for v, n in truth.items() if n < 5), key=lambda vn: vn[1])
    names, counts, rest = s.top(2)
    assert names == [v for v, _ in truth.most_common(2)] and rest == sum(truth.values()) - sum(counts)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["p", "q", "r", "s", None]), max_size=30), min_size=1, max_size=5))
def test_chunks_merge_to_the_counts_of_the_whole(chunks):
    parts = []
    for chunk in chunks:
        codes, uniques = pd.factorize(pd.Series(chunk, dtype=object), use_na_sentinel=True)
        parts.append((codes, np.asarray(uniques, dtype=object)))
    s = summarize_coded("c", parts)
    flat = [v for chunk in chunks for v in chunk]
    assert s.as_dict() == dict(Counter(v for v in flat if v is not None))
    assert s.missing == flat.count(None)


def test_numeric_histogram_with_given_and_default_edges():
    ages = [str(a) for a in range(0, 100)] * 3 + ["?", "?", "n/a"]
    s = summarize_frame(pd.DataFrame({"age": ages}))["age"]
    assert s.numeric_rows == 300 and s.numeric_range() == (0.0, 99.0)
    counts, edges = s.histogram([-np.inf, 18, 65, np.inf])
    assert counts.tolist() == [18 * 3, 47 * 3, 35 * 3] and edges[1] == 18
    counts, edges = s.histogram()
    assert counts.sum() == 300 and edges.size == 21 and edges[0] == 0 and edges[-1] == 99
    values = np.repeat(np.arange(100.0), 3)
    assert counts.tolist() == np.histogram(values, bins=edges)[0].tolist()
    # the release's rule: a value outside finite edges is not counted, the last bin is closed
    counts, _ = s.histogram([10, 20, 30])
    assert counts.tolist() == [30, 33]


def test_recoded_counts_and_many_categories():
    n = 70_000
    values = np.asarray([f"code{i:05d}" for i in range(n)], dtype=object)
    counts = np.arange(1, n + 1, dtype=np.int64) % 7
    s = ColumnSummary("icd", values, counts, missing=3)
    assert s.distinct == n and s.present == int(counts.sum())
    assert len(s.rare()) == int(np.count_nonzero((counts > 0) & (counts < 5)))  # none released: not rare
    merged = s.recoded({"Other": [str(v) for v, c in zip(values, counts, strict=True) if c < 5]})
    assert merged["Other"] == int(counts[counts < 5].sum()) and sum(merged.values()) == s.present
    v, c = merge_value_counts([(values[:10], counts[:10]), (values[5:15], counts[5:15])])
    assert dict(zip(v, c, strict=True)) == {**dict(zip(values[:15], counts[:15], strict=True)),
                                            **{values[i]: 2 * counts[i] for i in range(5, 10)}}
