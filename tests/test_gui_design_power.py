"""The Design tab says what tests of association the shown design can detect on the needed 2-way tables, as
``optrr design`` prints it (optrr_engine.analysis.power.design_power), computed in the design worker with the
predicted error (real engine designs)."""

from itertools import combinations

import pytest

from optrr_engine.analysis.power import design_power
from optrr_gui.design.controller import DesignController
from optrr_gui.design.mechanism_panel import METHOD_LABELS, MechanismPanel
from optrr_gui.state.session import ColumnState, SessionState
from optrr_gui.workers.jobs.design import compute_design, repredict
from optrr_gui.workers.runner import TaskRunner

WAIT_MS = 120_000
SIZES = [3, 4, 2, 5]
PAIRS = list(combinations(range(len(SIZES)), 2))


def budget_request(target: float, needed=None) -> dict:
    k = len(SIZES)
    return {
        "budget_mode": True,
        "epsilons": [1.0] * k,
        "weights": [1.0] * k,
        "target_total": target,
        "names": [f"c{i}" for i in range(k)],
        "needed": needed,
    }


def test_the_design_worker_computes_the_engines_test_power_with_the_predicted_error():
    s = compute_design("kronecker", SIZES, budget_request(4.0), 5000)
    expected = design_power(s.design.mechanism, 5000, PAIRS)
    assert s.ok and expected is not None and s.test_power == expected
    one_way = {"orders": [1], "sets": []}
    assert compute_design("kronecker", SIZES, budget_request(4.0, one_way), 5000).test_power is None
    assert repredict(s, 5000, budget_request(4.0, one_way)).test_power is None  # new needed tables: recomputed
    named = {"orders": [1], "sets": [["c0", "c3"]]}  # a named pair is a needed 2-way table too
    assert repredict(s, 5000, budget_request(4.0, named)).test_power == design_power(s.design.mechanism, 5000, [(0, 3)])
    smp = compute_design("smp", SIZES, budget_request(4.0), 5000)  # never reports two columns together
    assert smp.ok and smp.erased and smp.test_power is None and design_power(smp.design.mechanism, 5000, PAIRS) is None


@pytest.fixture
def make_panel(qtbot):
    made = []

    def make(target: float, rows: int) -> MechanismPanel:
        state = SessionState()
        cols = [ColumnState(f"c{i}", categories=[str(v) for v in range(a)]) for i, a in enumerate(SIZES)]
        state.load_columns(None, {}, cols, rows)
        state.budget_mode, state.target_total = True, target
        runner = TaskRunner()
        made.append(runner)
        controller = DesignController(state, runner, lambda: [len(c.categories) for c in state.perturbed_columns()])
        panel = MechanismPanel(controller)
        qtbot.addWidget(panel)
        panel.resize(1000, 900)
        panel.show()
        controller.recompute()
        idle(qtbot, panel)
        return panel

    yield make
    for runner in made:
        runner.cancel_all()
        runner.wait_for_done(30_000)


def idle(qtbot, panel) -> None:
    c = panel.controller
    qtbot.waitUntil(lambda: c.is_idle() and not c.running() and not panel.drawing_pending(), timeout=WAIT_MS)
    panel.flush()


def show(panel, method: str) -> None:
    panel._row_clicked(panel._rows.index(method))
    panel.flush()


def test_the_shown_design_states_what_its_tests_of_association_detect(qtbot, make_panel):
    panel = make_panel(4.0, 5000)
    c = panel.controller
    for method in (panel.shown_method, "kronecker", "sample-2"):
        show(panel, method)
        s = c.current()[method]
        statement = design_power(s.design.mechanism, 5000, PAIRS)["statement"]
        text = panel.power_line.text()
        assert panel.power_line.isVisible() and statement in text and text.startswith(METHOD_LABELS[method])
    # SMP never reports two columns together: no test, and nothing said about one (its erased tables are named)
    show(panel, "smp")
    assert c.current()["smp"].erased and not panel.power_line.isVisible() and panel.power_line.text() == ""
    # only 1-way tables needed: no test of association to speak of, for any design
    c.state.set_session_value("needed_marginals", {"orders": [1], "sets": []})
    c.recompute()
    idle(qtbot, panel)
    for method in ("kronecker", "sample-2", panel._rows[0]):
        show(panel, method)
        assert c.current()[method].test_power is None
        assert not panel.power_line.isVisible() and panel.power_line.text() == ""


def test_tables_that_detect_no_association_are_said_without_hovering(make_panel):
    panel = make_panel(1.0, 300)
    s = panel.controller.current()[panel.shown_method]
    power = design_power(s.design.mechanism, 300, PAIRS)
    assert power is not None and power["no_power"] > 0
    text = panel.power_line.text()
    assert panel.power_line.isVisible() and text.startswith("⚠") and power["statement"] in text
    if power["no_power"] < power["tables"]:
        assert f"{power['no_power']} of them detect no association at all" in text
    else:
        assert "none detects any association" in text and "Cohen's w >=" not in text
    assert "b00000" in panel.power_line.styleSheet()  # in red, as the erased tables' line
