"""CSV and PNG writers for the comparisons (files appear atomically: temp file in the folder, then os.replace).

PNG uses matplotlib's Agg canvas directly (no global backend switch, no display needed), imported lazily.
"""

from __future__ import annotations

import os
import tempfile

from ..errors import InputError


def _atomic(path: str, write) -> str:
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder {folder}: {exc.strerror}") from None
    fd, tmp = tempfile.mkstemp(prefix=".optrr-", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def write_csv(frame, path: str) -> str:
    return _atomic(path, lambda tmp: frame.to_csv(tmp, index=False))


def _figure(rows: int = 1, cols: int = 1, size=(7.0, 4.5)):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=110)
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, axes


def _save(fig, path: str) -> str:
    fig.tight_layout()
    return _atomic(path, lambda tmp: fig.savefig(tmp, format="png"))


STYLE = {"kronecker": ("black", "-"), "optimal": ("tab:red", "-."), "heuristic": ("tab:blue", "--")}
PALETTE = ("tab:green", "tab:purple", "tab:orange", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray")


def colors_for(methods) -> dict:
    """One color per method: the papers' colors for their designs, the palette for the others."""
    out, extra = {}, iter(PALETTE * 4)
    for m in methods:
        out[m] = STYLE[m][0] if m in STYLE else next(extra)
    return out


def plot_ratios(frame, path: str, y: str = "ratio_to_sum") -> str:
    """Figs. 1/3 (y = ratio_to_sum) or 2/4 (y = ratio_to_optimal): one panel per k, cases sorted by the x value."""
    ks = sorted(frame["k"].unique())
    fig, axes = _figure(1, len(ks), size=(3.2 * len(ks), 3.4))
    xcol = "sum_eps" if frame["mode"].iloc[0] == "fixed_sizes" else "sum_a"
    for ax, k in zip(axes[0], ks, strict=True):
        part = frame[frame["k"] == k]
        methods = ["heuristic"] if y == "ratio_to_optimal" else list(part["method"].unique())
        for m in methods:
            sub = part[part["method"] == m].sort_values(xcol)
            color, ls = STYLE.get(m, (None, "-"))
            ax.plot(sub[xcol], sub[y], ls, color=color, label=m, lw=1.2)
        ax.set_title(f"k = {k}")
        ax.set_xlabel("sum of eps_i" if xcol == "sum_eps" else "sum of a_i")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("eps_total / sum eps_i" if y == "ratio_to_sum" else "heuristic / optimal eps_total")
    axes[0][-1].legend(fontsize=8)
    return _save(fig, path)


def plot_snp(summary, path: str) -> str:
    """Fig. 5: mean |chi2_true - chi2_private| against the number of SNPs, bars = range over runs."""
    fig, axes = _figure()
    ax = axes[0][0]
    colors = colors_for(sorted(summary["method"].unique()))
    for (m, est), part in summary.groupby(["method", "estimator"]):
        part = part.sort_values("k")
        color = colors[m]
        ls = "-" if est == "raw" else ":"
        err = [part["mean_abs_error"] - part["min_over_runs"], part["max_over_runs"] - part["mean_abs_error"]]
        ax.errorbar(part["k"], part["mean_abs_error"], yerr=err, fmt=ls, color=color, capsize=2, label=f"{m} ({est})")
    ax.set_xlabel("number of SNPs (k)")
    ax.set_ylabel("mean |chi2_true - chi2_private|")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_count_queries(summary, path: str) -> str:
    """Domingo-Ferrer Fig. 3: median relative error against coverage sigma, one panel per p."""
    ps = sorted(summary["p"].unique())
    cols = min(2, len(ps))
    rows = (len(ps) + cols - 1) // cols
    fig, axes = _figure(rows, cols, size=(5.0 * cols, 3.6 * rows))
    flat = [a for r in axes for a in r]
    for ax, p in zip(flat, ps, strict=False):
        part = summary[summary["p"] == p]
        for m, sub in part.groupby("method"):
            sub = sub.sort_values("sigma")
            ls = "--" if m.endswith("structured") else "-"
            ax.plot(sub["sigma"], sub["median_relative_error"], ls, marker="o", ms=3, label=m)
        ax.set_title(f"p = {p}")
        ax.set_xlabel("coverage sigma")
        ax.set_ylabel("median relative error")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    for ax in flat[len(ps) :]:
        ax.set_visible(False)
    flat[0].legend(fontsize=7)
    return _save(fig, path)


def plot_avd(rows, path: str) -> str:
    """Mean AVD against the marginal's number of attributes, one line per design."""
    fig, axes = _figure()
    ax = axes[0][0]
    colors = colors_for(sorted(rows["method"].unique()))
    for m, part in rows.groupby("method"):
        part = part.sort_values("way")
        if part["mean_avd"].notna().any():
            color, ls = colors[m], STYLE.get(m, (None, "-"))[1]
            ax.errorbar(part["way"], part["mean_avd"], yerr=part["sd_avd"], fmt=ls, marker="o", color=color, label=m)
    ax.set_xlabel("attributes in the marginal")
    ax.set_ylabel("AVD (true vs estimated)")
    title = f"{rows['dataset'].iloc[0]}, whole-record epsilon {rows['target_epsilon'].iloc[0]:g}"
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)
