"""Qt-free jobs of the Compare tab, all computed by the engine's comparison harness (``optrr_engine.compare``)
and estimation code; each returns plain data (DataFrames) that the view plots and exports.

- the paper's Figs. 1-4: whole-record epsilon of Kronecker / optimal / heuristic on random requests;
- AVD of 2- to 5-way marginals of the loaded data, every design at the same whole-record epsilon;
- one attribute's marginal: original vs raw perturbed vs estimated (with its confidence interval), for one
  design at that whole-record epsilon.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optrr_engine import compare as harness
from optrr_engine.compare.budgets import budgeted_design
from optrr_engine.designs import METHODS
from optrr_engine.errors import InputError
from optrr_engine.estimation import estimate_from_counts
from optrr_engine.estimation.counts import count_codes
from optrr_engine.io.readers import ReaderOptions, iter_chunks
from optrr_engine.tasks import TaskControl

#: The four figures: (mode of ratio_curves, column plotted, x column, label).
FIGURES = {
    "fig1": ("fixed_sizes", "ratio_to_sum", "sum_eps", "Fig. 1 — a_i = 5: whole-record ε / Σε_i against Σε_i"),
    "fig2": ("fixed_sizes", "ratio_to_optimal", "sum_eps", "Fig. 2 — a_i = 5: heuristic / optimal whole-record ε"),
    "fig3": ("fixed_epsilons", "ratio_to_sum", "sum_a", "Fig. 3 — ε_i = 3: whole-record ε / Σε_i against Σa_i"),
    "fig4": ("fixed_epsilons", "ratio_to_optimal", "sum_a", "Fig. 4 — ε_i = 3: heuristic / optimal whole-record ε"),
}


def ratio_figure(figure: str, ks, sets: int, seed=None, progress=None, cancel=None):
    """DataFrame of ``optrr_engine.compare.ratio_curves`` for one of the paper's figures."""
    mode = FIGURES[figure][0]
    return harness.ratio_curves(ks=tuple(ks), sets=int(sets), mode=mode, seed=seed, progress=progress, cancel=cancel)


def load_data(path: str, options: dict, columns: list[str] | None, progress=None, cancel=None):
    """The loaded file as the harness's categorical data (its stated preparation rules), restricted to the
    columns the session perturbs when there are at least two of them."""
    ctl = TaskControl(progress, cancel)
    frames = []
    for frame in iter_chunks(path, ReaderOptions.from_dict(options), columns=columns or None):
        ctl.check()
        frames.append(frame)
        ctl.report(0.0, f"{sum(len(f) for f in frames):,} rows read")
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    frame = frame.fillna("")
    name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return harness.prepare_frame(frame, name)


#: The AVD page's designs (the harness's default) and the Bloom-filter schemes it can add.
AVD_METHODS = (*METHODS, "rr_clusters")
BLOOM_METHODS = ("lopub", "locop", "brr")


def avd(
    data,
    target: float,
    ways,
    subsets: int,
    estimator: str,
    seed=None,
    methods=None,
    axis: str = "whole_record",
    progress=None,
    cancel=None,
):
    """(rows, design summaries) of ``optrr_engine.compare.avd_table`` (``target`` on ``axis``)."""
    return harness.avd_table(
        data,
        target,
        methods=methods,
        axis=axis,
        ways=tuple(ways),
        subsets=int(subsets),
        estimator=estimator,
        seed=seed,
        progress=progress,
        cancel=cancel,
    )


def marginal_comparison(data, target: float, method: str, attribute: int, seed=None, progress=None, cancel=None):
    """One attribute: original shares, raw shares in one perturbed copy, and the unbiased estimate with its
    95 % interval, for ``method`` at whole-record epsilon ``target`` (equal weights)."""
    ctl = TaskControl(progress, cancel)
    sizes = data.sizes
    design = budgeted_design(method, sizes, np.ones(len(sizes)), float(target), ctl)
    if not design.ok:
        raise InputError(f"{method} at whole-record ε {target:g}: {design.error}")
    ctl.report(0.5, "perturbing")
    rng = np.random.default_rng(seed)
    perturbed = design.mechanism.sample(data.codes, rng)
    a = int(sizes[attribute])
    original = count_codes(data.codes[:, [attribute]], [a]) / data.rows
    observed = count_codes(perturbed[:, [attribute]], [a])
    est = estimate_from_counts(design.mechanism.marginal([attribute]), observed, method="unbiased")
    return pd.DataFrame(
        {
            "category": data.categories[attribute],
            "original": original,
            "perturbed": observed / data.rows,
            "estimated": est.estimate,
            "ci_low": est.ci_low,
            "ci_high": est.ci_high,
            "attribute": data.columns[attribute],
            "method": method,
            "attribute_epsilon": float(design.mechanism.attribute_epsilons()[attribute]),
            "overall_epsilon": float(design.mechanism.overall_epsilon()),
        }
    )


def avd_on_file(
    path,
    options,
    columns,
    target,
    ways,
    subsets,
    estimator,
    seed=None,
    methods=None,
    axis: str = "whole_record",
    progress=None,
    cancel=None,
):
    """Read and prepare the file, then :func:`avd` (one job, so that it can run in a worker process)."""
    ctl = TaskControl(progress, cancel)
    data = load_data(path, options, columns, ctl.sub(0.0, 0.2).progress, cancel)
    rows, designs = avd(data, target, ways, subsets, estimator, seed, methods, axis, ctl.sub(0.2, 1.0).progress, cancel)
    return {"rows": rows, "designs": designs, "name": data.name, "columns": list(data.columns)}


def marginal_on_file(path, options, columns, target, method, attribute: str, seed=None, progress=None, cancel=None):
    """Read and prepare the file, then :func:`marginal_comparison` for the named column."""
    from optrr_engine.errors import InputError

    ctl = TaskControl(progress, cancel)
    data = load_data(path, options, columns, ctl.sub(0.0, 0.3).progress, cancel)
    names = list(data.columns)
    if attribute not in names:
        if attribute:
            raise InputError(f"column {attribute!r} is not among the prepared columns: {', '.join(names)}")
        attribute = names[0]
    frame = marginal_comparison(data, target, method, names.index(attribute), seed, ctl.sub(0.3, 1.0).progress, cancel)
    return {"frame": frame, "rows": data.rows, "columns": names}
