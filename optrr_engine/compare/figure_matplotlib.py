"""matplotlib PNG backend for :class:`~optrr_engine.compare.figures.FigureSpec` (the default of pip installs).

Uses the Agg canvas directly (no global backend switch, no display). Imported only when a PNG is drawn.
"""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .figures import FigureSpec, PanelSpec

DPI = 110
POINT = 72 / DPI  # one pixel in points
LINESTYLES = {"solid": "-", "dash": "--", "dashdot": "-.", "dot": ":"}


def render_png_matplotlib(spec: FigureSpec, path: str) -> None:
    fig = Figure(figsize=(spec.width_px / DPI, spec.height_px / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = [ax for row in fig.subplots(spec.rows, spec.columns, squeeze=False) for ax in row]
    handles = {}
    for ax, panel in zip(axes, spec.panels, strict=False):
        _draw_panel(ax, panel)
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    for ax in axes[len(spec.panels) :]:
        ax.set_visible(False)
    right = 1.0
    if spec.legend == "right" and handles:
        labels = [s.label for s in spec.legend_series()]
        legend = fig.legend(
            [handles[t] for t in labels], labels, loc="upper right", fontsize=spec.legend_size, borderaxespad=0.6
        )
        width = legend.get_window_extent(fig.canvas.get_renderer()).width
        right = 1.0 - (width + 12) / spec.width_px
    fig.tight_layout(rect=(0, 0, right, 1))
    fig.savefig(path, format="png", dpi=DPI)


def _draw_panel(ax, panel: PanelSpec) -> None:
    for s in panel.series:
        style = {
            "color": s.color,
            "linestyle": "none" if s.kind == "points" else LINESTYLES[s.dash],
            "linewidth": s.width * POINT,
            "label": s.label or None,
        }
        if s.marker:
            style.update(marker=s.marker, markersize=s.marker_size * POINT)
        if s.has_errors:
            ax.errorbar(s.x, s.y, yerr=[s.err_low, s.err_high], capsize=2, elinewidth=s.width * POINT * 0.8, **style)
        else:
            ax.plot(s.x, s.y, **style)
    if panel.ylog:
        ax.set_yscale("log")
    if panel.xticks is not None:
        ax.set_xticks(panel.xticks)
    ax.set_title(panel.title)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    if panel.grid:
        ax.grid(alpha=0.3)
    if panel.legend is not None and any(s.label for s in panel.series):
        ax.legend(fontsize=panel.legend_size, loc=panel.legend)
