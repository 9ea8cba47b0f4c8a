"""The comparisons' figures and files (files appear atomically: temp file in the folder, then os.replace).

Each figure is described as a :class:`~optrr_engine.compare.figures.FigureSpec` (``*_figure`` functions,
plain data with the colours of :mod:`.figures`); the Compare tab draws these specs, and
:func:`~optrr_engine.compare.figures.render` writes them as PNG or SVG through the same renderer.
"""

from __future__ import annotations

import math

import numpy as np

from ..io.atomic import write_atomic
from .figures import SHARE_COLORS, TAB10, FigureSpec, PanelSpec, SeriesSpec, colors_for, dash_for, marker_for, render


def write_csv(frame, path: str) -> str:
    return write_atomic(path, lambda tmp: frame.to_csv(tmp, index=False))


def _column(frame, name) -> list[float]:
    return frame[name].to_numpy(dtype=float).tolist()


#: The figures of the paper's ratios, by the column plotted: (y label, whose ratio is plotted).
RATIO_LABELS = {"ratio_to_sum": "whole-record ε / Σ ε_i", "ratio_to_optimal": "heuristic / optimal whole-record ε"}


def ratios_figure(frame, y: str = "ratio_to_sum") -> FigureSpec:
    """Figs. 1/3 (y = ratio_to_sum) or 2/4 (y = ratio_to_optimal): one panel per k, one point per random
    request (as in the paper; a line would zig-zag between requests)."""
    ks = sorted(frame["k"].unique())
    xcol = "sum_eps" if frame["mode"].iloc[0] == "fixed_sizes" else "sum_a"
    colors = colors_for(frame["method"].unique())
    panels = []
    for i, k in enumerate(ks):
        part = frame[frame["k"] == k]
        methods = ["heuristic"] if y == "ratio_to_optimal" else list(part["method"].unique())
        series = []
        for m in methods:
            sub = part[part["method"] == m].sort_values(xcol)
            series.append(
                SeriesSpec(
                    _column(sub, xcol),
                    _column(sub, y),
                    label=m,
                    color=colors[m],
                    kind="points",
                    marker=marker_for(m),
                    marker_size=7.0,
                )
            )
        panels.append(
            PanelSpec(
                series,
                title=f"k = {k}",
                xlabel="Σ ε_i" if xcol == "sum_eps" else "Σ a_i",
                ylabel=RATIO_LABELS[y] if i == 0 else "",
                legend="best" if i == len(ks) - 1 else None,
            )
        )
    return FigureSpec(panels, columns=len(ks), width_px=352 * len(ks), height_px=374)


def snp_figure(summary) -> FigureSpec:
    """Fig. 5: mean |chi2_true - chi2_private| against the number of SNPs, bars = range over runs."""
    colors = colors_for(sorted(summary["method"].unique()))
    series = []
    for (m, est), part in summary.groupby(["method", "estimator"]):
        part = part.sort_values("k")
        mean = part["mean_abs_error"]
        series.append(
            SeriesSpec(
                _column(part, "k"),
                _column(part, "mean_abs_error"),
                label=f"{m} ({est})",
                color=colors[m],
                dash="solid" if est == "raw" else "dot",
                width=2.0,
                err_low=(mean - part["min_over_runs"]).to_numpy(dtype=float).tolist(),
                err_high=(part["max_over_runs"] - mean).to_numpy(dtype=float).tolist(),
            )
        )
    panel = PanelSpec(series, xlabel="number of SNPs (k)", ylabel="mean |chi2_true - chi2_private|")
    return FigureSpec([panel], width_px=770, height_px=495)


def count_queries_figure(summary) -> FigureSpec:
    """Domingo-Ferrer Fig. 3: median relative error against coverage sigma, one panel per p."""
    ps = sorted(summary["p"].unique())
    cols = min(2, len(ps))
    rows = -(-len(ps) // cols)
    colors = dict(zip(sorted(summary["method"].unique()), TAB10 * 4, strict=False))
    sigmas = sorted(float(v) for v in summary["sigma"].unique())
    panels = []
    for p in ps:
        part = summary[summary["p"] == p]
        series = []
        for m, sub in part.groupby("method"):
            sub = sub.sort_values("sigma")
            series.append(
                SeriesSpec(
                    _column(sub, "sigma"),
                    _column(sub, "median_relative_error"),
                    label=m,
                    color=colors[m],
                    dash="dash" if m.endswith("structured") else "solid",
                    width=2.0,
                    marker="o",
                    marker_size=5.0,
                )
            )
        panels.append(
            PanelSpec(
                series,
                title=f"p = {p:g}",
                xlabel="coverage sigma",
                ylabel="median relative error",
                ylog=True,
                xticks=sigmas if len(sigmas) <= 10 else None,
                legend=None,
            )
        )
    # eight methods: one legend right of the panels (inside a panel it would hide curves)
    return FigureSpec(panels, columns=cols, width_px=500 * cols + 190, height_px=396 * rows, legend="right")


def _mean_sd_line(
    part, x: str, y: str, sd: str, method: str, color, marker_size: float, label: str | None = None
) -> SeriesSpec:
    """One design's line of means with +- one sd bars, in the design's colour and dash, named ``label`` (else the
    design's name) in the legend."""
    spread = _column(part, sd)
    return SeriesSpec(
        _column(part, x),
        _column(part, y),
        label=method if label is None else label,
        color=color,
        dash=dash_for(method),
        width=2.0,
        marker="o",
        marker_size=marker_size,
        err_low=spread,
        err_high=spread,
    )


def avd_figure(rows) -> FigureSpec:
    """Mean AVD against the marginal's number of attributes, one line per design (bars: +- one sd)."""
    colors = colors_for(sorted(rows["method"].unique()))
    series = []
    for m, part in rows.groupby("method"):
        part = part.sort_values("way")
        if part["mean_avd"].notna().any():
            series.append(_mean_sd_line(part, "way", "mean_avd", "sd_avd", m, colors[m], marker_size=7.0))
    ways = sorted({int(w) for w in rows["way"].unique() if not math.isnan(w)})
    axis = rows["epsilon_axis"].iloc[0] if "epsilon_axis" in rows else "whole_record"
    label = "whole-record ε" if axis == "whole_record" else "ε per attribute"
    title = f"{rows['dataset'].iloc[0]}: AVD of estimated marginals, {label} {rows['target_epsilon'].iloc[0]:g}"
    panel = PanelSpec(
        series,
        title=title,
        xlabel="attributes in the marginal",
        ylabel="AVD (true vs estimated; lower = better)",
        xticks=ways,
    )
    return FigureSpec([panel], width_px=770, height_px=495)


def designs_figure(rows, labels=None) -> FigureSpec:
    """The designs at one whole-record epsilon on the user's data (optrr_engine.compare.designs_on_data): mean
    measured AVD against the marginal's number of attributes, one line per design (bars: +- one sd); a design
    that cannot answer a size has no point there. ``labels``: {design: its name in the legend} (the design's own
    name otherwise)."""
    labels = labels or {}
    rows = rows.rename(columns={"design": "method"})
    colors = colors_for(list(dict.fromkeys(rows.sort_values("rank")["method"])))
    series = []
    for m, part in rows.groupby("method", sort=False):
        part = part.sort_values("way")
        if part["measured_avd"].notna().any():
            series.append(
                _mean_sd_line(part, "way", "measured_avd", "sd_avd", m, colors[m], 7.0, labels.get(m))
            )
    ways = sorted(int(w) for w in rows["way"].unique())
    eps = float(rows["whole_record_epsilon"].max())
    panel = PanelSpec(
        series,
        title=f"Every design at whole-record ε ≤ {eps:.3g}: error of the estimated tables, released from your data",
        xlabel="attributes in the table",
        ylabel="AVD (true vs estimated; lower = better)",
        xticks=ways,
    )
    return FigureSpec([panel], width_px=770, height_px=495)


def avd_sweep_figure(rows, value: str = "mean_avd") -> FigureSpec:
    """The LOPUB/LOCOP/BRR paper's Figs. 3 and 5: ``value`` (mean_avd or mean_r2) against epsilon on one axis,
    one panel per way, one line per method (bars: +- one sd)."""
    from .avd_marginals import AXIS_LABELS

    sd_col = "sd_avd" if value == "mean_avd" else "sd_r2"
    axis = str(rows["epsilon_axis"].iloc[0])
    colors = colors_for(sorted(rows["method"].unique()))
    ways = sorted(int(w) for w in rows["way"].unique())
    panels = []
    for i, way in enumerate(ways):
        series = []
        for m, part in rows[rows["way"] == way].groupby("method"):
            part = part.sort_values("epsilon")
            if not part[value].notna().any():
                continue
            series.append(_mean_sd_line(part, "epsilon", value, sd_col, m, colors[m], marker_size=6.0))
        panels.append(
            PanelSpec(
                series,
                title=f"{rows['dataset'].iloc[0]}, k = {way}",
                xlabel=AXIS_LABELS[axis],
                ylabel=("AVD (true vs estimated)" if value == "mean_avd" else "R-squared (true vs estimated)")
                if i == 0
                else "",
                legend=None,
            )
        )
    return FigureSpec(panels, columns=len(ways), width_px=330 * len(ways) + 150, height_px=380, legend="right")


def plot_avd_sweep(rows, path: str, value: str = "mean_avd") -> str:
    return render(avd_sweep_figure(rows, value), path)


#: The marginal figure's legend: what the sender has, what the receiver sees, what it recovers.
MARGINAL_LABELS = {"original": "original data", "perturbed": "raw perturbed", "estimated": "estimated (95 % CI)"}


def marginal_figure(frame, method_label: str | None = None, labels: dict | None = None, title: str | None = None):
    """One attribute's shares: original, perturbed and estimated (bars: its interval ``ci_low``..``ci_high``),
    per category (``frame`` as the Compare tab's preview job returns it). ``labels`` replaces legend texts of
    :data:`MARGINAL_LABELS`; ``title`` the panel's title. Returns a one-panel FigureSpec."""
    n = len(frame)
    labels = {**MARGINAL_LABELS, **(labels or {})}
    series = []
    for j, col in enumerate(MARGINAL_LABELS):
        errors = {}
        if col == "estimated":
            est = frame[col].to_numpy(dtype=float)
            low = np.maximum(est - frame["ci_low"].to_numpy(dtype=float), 0.0)
            high = np.maximum(frame["ci_high"].to_numpy(dtype=float) - est, 0.0)
            errors = {"err_low": low.tolist(), "err_high": high.tolist(), "err_color": "#000000"}
        x = [i + (j - 1) * 0.27 for i in range(n)]  # three bars side by side per category
        bars = {"kind": "bars", "bar_width": 0.26, **errors}
        series.append(SeriesSpec(x, _column(frame, col), label=labels[col], color=SHARE_COLORS[col], **bars))
    if title is None:
        first = frame.iloc[0]
        title = (
            f"{first['attribute']}: {method_label or first['method']}, ε of the column "
            f"{first['attribute_epsilon']:.3f}, whole-record ε {first['overall_epsilon']:.3f}"
        )
    ticks = [str(c) if len(str(c)) <= 12 else str(c)[:11] + "…" for c in frame["category"]]
    panel = PanelSpec(series, title=title, ylabel="share of rows", xticks=range(n), xtick_labels=ticks)
    return FigureSpec([panel], width_px=770, height_px=495)


def plot_ratios(frame, path: str, y: str = "ratio_to_sum") -> str:
    return render(ratios_figure(frame, y), path)


def plot_snp(summary, path: str) -> str:
    return render(snp_figure(summary), path)


def plot_count_queries(summary, path: str) -> str:
    return render(count_queries_figure(summary), path)


def plot_avd(rows, path: str) -> str:
    return render(avd_figure(rows), path)
