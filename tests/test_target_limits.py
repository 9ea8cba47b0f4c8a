"""A whole-record target that no design can use is refused in words, before any design runs: no column may exceed
the per-column maximum, so a sampling design's row (m reported columns) can use at most m x MAX_EPSILON, and a
design of k columns at most k x MAX_EPSILON (a GUI user typed 10,000; SMP then computed log(0) and reported
'whole-record epsilon 10000')."""

from __future__ import annotations

import pytest

from optrr_engine.errors import InputError
from optrr_engine.sampling import make_sampling_design
from optrr_engine.validation import MAX_EPSILON, MIN_EPSILON, check_target


def test_check_target_bounds():
    assert check_target(3.0) == 3.0 and check_target(100.0, 2) == 100.0
    with pytest.raises(InputError, match="at most 50 per column .* so at most 100 here"):
        check_target(100.001, 2)
    with pytest.raises(InputError, match="below the smallest accepted"):
        check_target(MIN_EPSILON / 2)
    with pytest.raises(InputError, match="positive"):
        check_target(-1.0)


@pytest.mark.parametrize("method,m", [("smp", None), ("rsfd", None), ("sample-m", 2)])
def test_sampling_designs_refuse_a_target_their_rows_cannot_use(method, m):
    reported = m or 1
    limit = MAX_EPSILON * reported
    design = make_sampling_design(method, [2, 3, 2], limit, m=m)
    assert design.target == limit
    with pytest.raises(InputError, match=f"each row's {reported} reported column.*at most {limit:g} here"):
        make_sampling_design(method, [2, 3, 2], 10_000.0, m=m)


def test_budget_designs_the_recommender_and_the_utility_design_refuse_an_unusable_target():
    from optrr_engine.budget import distribute_budget
    from optrr_engine.utility.optimal_design import utility_design
    from optrr_engine.utility.recommend import recommend

    for run in (
        lambda: distribute_budget("kronecker", [2, 3], [1, 1], 100.5),
        lambda: recommend([2, 3], 10_000.0),
        lambda: utility_design([2, 3], 10_000.0),
    ):
        with pytest.raises(InputError, match="cannot be used with 2 randomized columns.*at most 100 here"):
            run()


def test_equal_predictions_recommend_the_lower_whole_record_epsilon():
    """At the largest usable target every design is capped at 50 per column and predicts the same error: the
    recommendation is the one with the least privacy loss (it was Kronecker at 100, by candidate order)."""
    from optrr_engine.utility.recommend import recommend

    rec = recommend([2, 3], 100.0, include_sampling=False)
    eps = [r.candidate.whole_record_epsilon() for r in rec.ranked]
    assert rec.best.candidate.whole_record_epsilon() == pytest.approx(min(eps))
    assert eps == sorted(eps) and eps[-1] == pytest.approx(100.0) and eps[0] < 60.0


def test_the_window_breaks_ties_of_prediction_by_the_lower_whole_record_epsilon():
    from types import SimpleNamespace

    from optrr_gui.state.design_summary import _compare_beyond_prediction

    low = SimpleNamespace(overall_epsilon=40.5, scale=1.0, method="optimal")
    high = SimpleNamespace(overall_epsilon=69.4, scale=2.0, method="heuristic")
    assert _compare_beyond_prediction(low, high, True) == -1  # larger scale no longer wins over less privacy loss
    assert _compare_beyond_prediction(high, low, True) == 1


def test_the_design_table_names_these_refusals_in_a_few_words():
    from optrr_gui.design.mechanism_panel import short_reason

    with pytest.raises(InputError) as target:
        check_target(200.0, 2)
    assert short_reason(str(target.value)) == "target above what can be used"
    lp = ("too large for the exact design: its LP over 20 columns is predicted to take 76 s on the reference machine "
          "(limit 30 s; columns 1, 2 have 50+ categories); use auto")
    assert short_reason(lp) == "too many categories"


def test_the_ranking_of_only_failed_candidates_says_no_design_could_be_built(monkeypatch):
    """The tie-break by epsilon must not ask a failed candidate for its epsilon (it crashed with AttributeError)."""
    from optrr_engine.errors import OptRRError
    from optrr_engine.utility import recommend as recommend_module

    def fail(*_args, **_kwargs):
        raise InputError("cannot build")

    for name in ("_budget", "_utility", "_sampling"):
        monkeypatch.setattr(recommend_module, name, fail)
    with pytest.raises(OptRRError, match="no design could be built"):
        recommend_module.recommend([2, 3], 2.0)
