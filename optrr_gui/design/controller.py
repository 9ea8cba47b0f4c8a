"""Keeps one design summary per method up to date with the session, off the UI thread.

On every relevant edit the request (sizes, epsilons or weights and target, rows) is resubmitted for every
method; each method has its own channel in the task runner, so a result of an older request is dropped
(generation numbers) and a slow method never delays a quick one. Summaries of an older request stay
visible, marked stale, until their replacement arrives.
"""

from __future__ import annotations

import json
import os
import time
from functools import lru_cache, partial

from PySide6.QtCore import QObject, QTimer, Signal

from ..state.config_bridge import column_shares, shares_digest
from ..state.design_summary import (
    BUDGET_ONLY_METHODS,
    DesignSummary,
    available_methods,
    design_wording,
    is_quick,
    ranked,
    recommend,
)
from ..state.session import SessionState, too_few_rows
from ..workers.jobs.design import compute_design, repredict
from ..workers.runner import TaskRunner

#: Submission order: the closed-form designs first, then the small LPs, then the exact ones.
CHEAP_FIRST = (
    "kronecker",
    "heuristic",
    "smp",
    "rsfd",
    "family",
    "sample-2",
    "sample-3",
    "classes",
    "optimal",
    "auto",
    "utility",
    "clusters",
)
#: RR-Clusters parameters (Domingo-Ferrer & Soria-Comas): at most this many value combinations per cluster,
#: and at least this dependence (Cramer's V) to merge two clusters.
CLUSTERS_TV = 50
CLUSTERS_TD = 0.1
#: Edits within this many milliseconds of the previous request are coalesced into one request (a dragged
#: slider); an edit after a quiet spell is computed at the next turn of the event loop.
DEBOUNCE_MS = 15


@lru_cache(maxsize=64)
def _key_shape(key: str) -> tuple | None:
    """(column sizes, total-budget mode) of a request key (parsed once per key: the dialog asks on every progress
    signal); None for no key."""
    if not key:
        return None
    sizes, request = json.loads(key)[:2]
    return tuple(sizes), bool(request.get("budget_mode"))


def channel_of(method: str) -> str:
    return f"design:{method}"


class DesignController(QObject):
    changed = Signal()

    def __init__(self, state: SessionState, runner: TaskRunner, sizes_fn, parent=None):
        super().__init__(parent)
        self.state, self.runner, self.sizes_fn = state, runner, sizes_fn
        self.all_methods = available_methods() + ("clusters",) + BUDGET_ONLY_METHODS
        self.summaries: dict[str, DesignSummary] = {}
        self.summary_keys: dict[str, str] = {}
        self.status: dict[str, str] = {}  # running | done | cancelled | failed
        self.progress: dict[str, tuple[float, str]] = {}
        self.key: str | None = None
        #: request key -> the key of its design part (everything but the needed marginals)
        self._design_keys: dict[str, str] = {}
        #: request key -> the needed marginals it asks for (the utility design depends on them too)
        self._needed_keys: dict[str, str] = {}
        self.n_rows: int | None = None
        self.sizes: list[int] = []
        self.request: dict = {}
        self.message = ""
        self._clusters_config: tuple | None = None
        #: the ranking of the latest results of the same columns and mode when the current request started
        self._before: list[str] = []
        self._last_request = 0.0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.recompute)
        state.subscribe(self._on_state)

    @property
    def methods(self) -> tuple[str, ...]:
        """The designs of the current mode: the utility and sampling designs only with a whole-record budget."""
        if self.state.budget_mode:
            return self.all_methods
        return tuple(m for m in self.all_methods if m not in BUDGET_ONLY_METHODS)

    # -- scheduling ------------------------------------------------------------------------
    def _on_state(self, kind, index, name) -> None:
        if kind == "session" and name in ("method", "accept_changed_epsilons"):
            self.changed.emit()
            return
        if kind == "rows":
            self._update_errors()
            if self.key is None and self.message:  # no design: the reason may be the rows now counted
                self.recompute()
            return
        quiet = time.perf_counter() - self._last_request > DEBOUNCE_MS / 1000
        self._timer.start(0 if quiet and not self._timer.isActive() else DEBOUNCE_MS)

    def recompute(self, force: bool = False) -> None:
        self._timer.stop()
        self._last_request = time.perf_counter()
        try:
            sizes = [int(a) for a in self.sizes_fn()]
        except Exception as exc:
            self._clear(f"cannot count the categories: {exc}")
            return
        request = self.state.design_request()
        #: the file's own 1-way shares, for the tests' power under the design table (never released); like the
        #: needed marginals, a change of them only re-predicts the designs found
        request["shares"] = column_shares(self.state)
        n_rows = self.state.n_rows
        self.n_rows = n_rows
        if not sizes:
            name = os.path.basename(self.state.data_path) if self.state.data_path else "the file"
            self._clear(too_few_rows(n_rows, name) or "choose at least one column to perturb")
            return
        if any(a < 2 for a in sizes):
            names = [n for n, a in zip(request["names"], sizes, strict=True) if a < 2]
            self._clear(f"{', '.join(names)}: a perturbed column needs at least 2 categories")
            return
        # the shares enter the key by a digest: dumping them at every edit cost a wide file's UI thread tens of ms
        plain = {k: v for k, v in request.items() if k != "shares"}
        key = json.dumps([sizes, plain, self.state.data_path, shares_digest(request["shares"])], sort_keys=True)
        if key == self.key and not force:
            return
        design_part = {k: v for k, v in request.items() if k not in ("needed", "shares")}
        design_key = json.dumps([sizes, design_part, self.state.data_path], sort_keys=True)
        old_key = self.key
        self._before = self._latest_ranking(sizes, bool(request["budget_mode"]))
        self._design_keys = {k: v for k, v in self._design_keys.items() if v == design_key}
        self._design_keys[key] = design_key
        self._needed_keys = {k: v for k, v in self._needed_keys.items() if k in self._design_keys}
        self._needed_keys[key] = json.dumps(request.get("needed"), sort_keys=True)
        self.key, self.sizes, self.request, self.message = key, sizes, request, ""
        if not force and old_key is not None and self._design_keys.get(old_key) == design_key:
            self._needed_changed(key, request, n_rows)
            return
        if not request["budget_mode"]:  # the budget-only designs are no rows in per-column mode
            for method in BUDGET_ONLY_METHODS:
                self.runner.cancel(channel_of(method))
                for table in (self.status, self.summaries, self.summary_keys):
                    table.pop(method, None)
        # Cheapest first: the quick thread runs them in submission order.
        order = sorted(self.methods, key=lambda m: CHEAP_FIRST.index(m) if m in CHEAP_FIRST else len(CHEAP_FIRST))
        for method in order:
            self.status[method] = "running"
            self.progress[method] = (0.0, "")
            if method == "clusters":
                self._submit_clusters(key, request, n_rows)
                continue
            self._submit(method, key, request, n_rows)
        self.changed.emit()

    def _submit(self, method: str, key: str, request: dict, n_rows) -> None:
        quick = is_quick(method, len(self.sizes), request["budget_mode"])
        self.runner.submit(
            channel_of(method),
            compute_design,
            method,
            self.sizes,
            request,
            n_rows,
            quick=quick,
            process=not quick,
            on_done=partial(self._done, method, key, n_rows),
            on_error=partial(self._failed, method, key),
            on_progress=partial(self._progress, method),
            on_cancelled=partial(self._cancelled, method),
        )

    def _submit_clusters(self, key: str, request: dict, n_rows) -> None:
        """RR-Clusters needs the data itself (dependence between columns): read in a worker process."""
        reason = ""
        if request["budget_mode"]:
            reason = "not available in total-budget mode (its ε per column comes from the clusters)"
        elif not self.state.data_path:
            reason = "needs the data: open a file"
        if reason:
            self.runner.cancel(channel_of("clusters"))
            self._done("clusters", key, n_rows, DesignSummary(method="clusters", ok=False, error=reason))
            return
        from ..workers.jobs.clusters import clusters_design  # lazily (its own heavy imports run in the worker)

        # The job reads only the columns' coding from the configuration (its epsilons come with the request):
        # build it once per version of the columns, not on every epsilon edit.
        if self._clusters_config is None or self._clusters_config[0] != self.state.data_version:
            self._clusters_config = (self.state.data_version, self.state.to_release_config())
        config = self._clusters_config[1]
        self.runner.submit(
            channel_of("clusters"),
            clusters_design,
            self.state.data_path,
            config,
            request["epsilons"],
            n_rows,
            CLUSTERS_TV,
            CLUSTERS_TD,
            process=True,
            on_done=partial(self._done, "clusters", key, n_rows),
            on_error=partial(self._failed, "clusters", key),
            on_progress=partial(self._progress, "clusters"),
            on_cancelled=partial(self._cancelled, "clusters"),
        )

    def _same_design(self, method: str, a: str | None, b: str | None) -> bool:
        """Whether requests ``a`` and ``b`` (keys) ask ``method`` for the same design: the same design part, and
        for the utility design also the same needed marginals (the file's shares change no design)."""
        same = a is not None and b is not None and self._design_keys.get(a, "") == self._design_keys.get(b, None)
        if method == "utility":
            return same and self._needed_keys.get(a or "", "") == self._needed_keys.get(b or "", None)
        return same

    def _needed_changed(self, key: str, request: dict, n_rows) -> None:
        """Only the needed marginals (or the file's shares) changed: the utility design is recomputed when the needed
        marginals did (it depends on them), every other design keeps its mechanism and only its predicted error is
        recomputed (the slow exact solves go on)."""
        for method in self.methods:
            if method == "utility" and not self._same_design(method, self.summary_keys.get(method), key):
                self.status[method] = "running"
                self._submit(method, key, request, n_rows)
            elif (
                self.summaries.get(method) is not None
                and not self.is_running(method)
                and self._same_design(method, self.summary_keys.get(method), key)
            ):  # a result for this very design request: only its predicted error changes
                self._repredict(method, self.summaries[method], key, n_rows)
        self.changed.emit()

    def _repredict(self, method: str, summary: DesignSummary, key: str, n_rows) -> None:
        if not (summary.ok and summary.design is not None):
            self.summary_keys[method] = key  # an unavailable design stays unavailable
            return
        self.runner.submit(
            f"predict:{method}",
            repredict,
            summary,
            n_rows,
            self.request,
            quick=True,
            on_done=partial(self._done, method, key, n_rows),
        )

    def _update_errors(self) -> None:
        """The row count changed: recompute only the expected and predicted errors of the designs found."""
        n_rows = self.state.n_rows
        self.n_rows = n_rows
        if self.key is None:
            return
        for method, summary in list(self.summaries.items()):
            if not self.is_stale(method):
                self._repredict(method, summary, self.key, n_rows)

    def _clear(self, message: str) -> None:
        for method in self.all_methods:
            self.runner.cancel(channel_of(method))
        self.summaries.clear()
        self.summary_keys.clear()
        self.status.clear()
        self.key, self.sizes, self.request, self.message = None, [], {}, message
        self.changed.emit()

    # -- results (UI thread) --------------------------------------------------------------------
    def _done(self, method: str, key: str, n_rows, summary: DesignSummary) -> None:
        if key != self.key and self._same_design(method, key, self.key):
            # the design answers the current request; only its predicted error is for older needed marginals
            self.summaries[method] = summary
            self._repredict(method, summary, self.key, self.n_rows)
            return
        self.summaries[method] = summary
        self.summary_keys[method] = key
        self.status[method] = "done" if summary.ok else "failed"
        if n_rows != self.n_rows and summary.ok:  # computed for an older row count: only its error is recomputed
            self._repredict(method, summary, key, self.n_rows)
        self.changed.emit()

    def _failed(self, method: str, key: str, exc: BaseException) -> None:
        error = design_wording(f"{type(exc).__name__}: {exc}")  # the window's words, once (as the design job's)
        self.summaries[method] = DesignSummary(method=method, ok=False, error=error)
        self.summary_keys[method] = key
        self.status[method] = "failed"
        self.changed.emit()

    def _progress(self, method: str, fraction: float, message: str) -> None:
        self.progress[method] = (fraction, message)
        self.changed.emit()

    def _cancelled(self, method: str) -> None:
        self.status[method] = "cancelled"
        self.changed.emit()

    # -- queries and commands -----------------------------------------------------------------
    def cancel(self, method: str | None = None) -> None:
        for m in [method] if method else self.all_methods:
            if self.runner.cancel(channel_of(m)):
                self.status[m] = "cancelled"
        self.changed.emit()

    def is_running(self, method: str) -> bool:
        return self.runner.is_busy(channel_of(method))

    def running(self) -> list[str]:
        return [m for m in self.all_methods if self.is_running(m)]

    def quick_running(self) -> list[str]:
        """The running designs that compute on the quick thread (closed forms, small LPs): back within moments."""
        budget = bool(self.request.get("budget_mode"))
        return [m for m in self.running() if m != "clusters" and is_quick(m, len(self.sizes), budget)]

    def is_idle(self) -> bool:
        predicting = any(self.runner.is_busy(f"predict:{m}") for m in self.all_methods)
        return not self._timer.isActive() and not self.running() and not predicting

    def is_stale(self, method: str) -> bool:
        return self.summary_keys.get(method) != self.key

    def current(self) -> dict[str, DesignSummary]:
        """Summaries that answer the current request."""
        return {m: s for m, s in self.summaries.items() if not self.is_stale(m)}

    def recommended(self) -> str | None:
        """The recommended design among the current results (never one that changed the ε typed in, unless the
        user accepted changed ε: ``SessionState.accept_changed_epsilons``)."""
        return recommend(
            self.current(), bool(self.request.get("budget_mode")), bool(self.state.accept_changed_epsilons)
        )

    def better_running(self) -> list[str]:
        """The designs still computing that may beat the best one finished (:meth:`recommended`): those ranked above
        it among the latest results of the same columns and mode when this request started (each design's result
        for the settings before the last change: compared with each other, never with results at other settings;
        with no design finished yet, the one recommended then), and those without such a result; a design whose
        predicted error is recomputed for new needed tables counts as computing. Best first; empty when nothing is
        computing."""
        predicting = [m for m in self.methods if self.runner.is_busy(f"predict:{m}") and not self.is_running(m)]
        running = [m for m in self.running() if m != "clusters"] + predicting  # (only the needed tables changed)
        if not running:
            return []
        best_now = self.recommended()
        if best_now is None:
            cut = 1
        else:
            cut = self._before.index(best_now) if best_now in self._before else len(self._before)
        better = [m for m in self._before[:cut] if m in running]
        shape = (tuple(self.sizes), bool(self.request.get("budget_mode")))
        unknown = [
            m
            for m in running
            if m in self.methods and m not in self.current() and _key_shape(self.summary_keys.get(m, "")) != shape
        ]
        return better + [m for m in unknown if m not in better]

    def ranked_before(self) -> list[str]:
        """The ranking of the latest results of the same columns and mode when the current request started (best
        first; empty when there were none: the first request, or the columns or the mode changed)."""
        return list(self._before)

    def _latest_ranking(self, sizes, budget_mode: bool) -> list[str]:
        """:func:`ranked` over the latest result of every design answering a request of ``sizes`` in this mode."""
        shape = (tuple(sizes), budget_mode)
        latest = {m: s for m, s in self.summaries.items() if _key_shape(self.summary_keys.get(m, "")) == shape}
        return ranked(latest, budget_mode, bool(self.state.accept_changed_epsilons))

    def picked(self) -> str | None:
        """The design the user picked in the mechanism panel, if it is a design of the current mode; else None."""
        method = self.state.method
        budget_only = method in BUDGET_ONLY_METHODS and not self.request.get("budget_mode")
        if method in self.methods and method != "clusters" and not budget_only:
            return method
        return None

    def chosen(self) -> str | None:
        """The design the release will use: the user's pick, or the recommended one."""
        return self.picked() or self.recommended()
