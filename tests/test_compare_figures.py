"""The comparison figures as FigureSpecs, drawn by the one renderer (pyqtgraph, optrr_gui.plots.figure_render) as
PNG and SVG, found through its entry point; ``optrr compare`` writes them offscreen and imports Qt only to draw."""

import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pandas as pd
import pytest

from optrr_engine.compare import figures, output, ratio_curves, snp_chi2_curve, summarize_snp
from optrr_engine.compare.figures import FigureSpec, PanelSpec, SeriesSpec, legend_place
from optrr_engine.errors import InputError
from optrr_gui.plots import figure_render
from optrr_gui.plots.figure_render import _log_ticks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _count_queries_summary():
    rng = np.random.default_rng(3)
    methods = ("randomized", "rr_independent", "rr_clusters_adjusted", "kronecker_structured", "optimized_structured")
    rows = [
        {"p": p, "sigma": s, "method": m, "median_relative_error": float(rng.uniform(1e-3, 1.0))}
        for p in (0.1, 0.5, 0.7)
        for s in (0.1, 0.3, 0.5, 0.7, 0.9)
        for m in methods
    ]
    return pd.DataFrame(rows)


def _avd_rows():
    rows = []
    for i, m in enumerate(("kronecker", "optimal", "heuristic", "family", "rr_clusters", "classes")):
        for way in (2, 3, 4, 5):
            mean = np.nan if m == "classes" else 0.05 * way + 0.04 * i  # a design that was not run: no curve
            rows.append(
                {
                    "dataset": "toy",
                    "method": m,
                    "way": way,
                    "target_epsilon": 7.0,
                    "mean_avd": mean,
                    "sd_avd": np.nan if way == 5 else 0.01 * (1 + i),
                }
            )
    return pd.DataFrame(rows)


def _marginal_frame():
    original = np.array([0.5, 0.3, 0.2])
    estimated = np.array([0.45, 0.33, 0.22])
    return pd.DataFrame(
        {
            "attribute": "age",
            "method": "kronecker",
            "attribute_epsilon": 1.25,
            "overall_epsilon": 4.0,
            "category": ["30-39", "40-49", "a very long category name"],
            "original": original,
            "perturbed": [0.4, 0.33, 0.27],
            "estimated": estimated,
            "ci_low": estimated - 0.05,
            "ci_high": estimated + 0.05,
        }
    )


@pytest.fixture(scope="module")
def specs():
    ratios = ratio_curves(ks=(3, 4), sets=4, seed=1)
    return {
        "ratios_to_sum": output.ratios_figure(ratios, "ratio_to_sum"),
        "ratios_to_optimal": output.ratios_figure(ratios, "ratio_to_optimal"),
        "snp_chi2": output.snp_figure(summarize_snp(snp_chi2_curve(ks=(10, 20), runs=2, seed=2))),
        "count_queries": output.count_queries_figure(_count_queries_summary()),
        "avd": output.avd_figure(_avd_rows()),
        "marginal": output.marginal_figure(_marginal_frame(), "Kronecker (GRR per attribute)"),
    }


def _pixels(path) -> np.ndarray:
    """The image as an (height, width, 3) uint8 array (read with Qt, whatever wrote it)."""
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull()
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    h, w = image.height(), image.width()
    raw = np.frombuffer(image.constBits(), np.uint8, count=image.sizeInBytes()).reshape(h, image.bytesPerLine())
    return raw[:, : 3 * w].reshape(h, w, 3).copy()


def _near(pixels, hex_color: str, tol: int = 30) -> int:
    rgb = np.array([int(hex_color[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels.astype(int) - rgb).max(axis=2) <= tol).sum())


def test_the_figures_describe_the_data(specs):
    ratios = specs["ratios_to_sum"]
    assert [p.title for p in ratios.panels] == ["k = 3", "k = 4"] and ratios.columns == 2
    assert {s.label for s in ratios.panels[0].series} == {"kronecker", "optimal", "heuristic"}
    assert all(s.kind == "points" for p in ratios.panels for s in p.series)  # one point per random request
    papers = ("kronecker", "optimal", "heuristic")
    assert {s.color for s in ratios.panels[0].series} == {figures.STYLE[m][0] for m in papers}
    assert [p.legend for p in ratios.panels] == [None, "best"] and ratios.panels[1].ylabel == ""
    assert ratios.panels[0].ylabel == "whole-record ε / Σ ε_i" and ratios.panels[0].xlabel == "Σ ε_i"
    assert [s.label for s in specs["ratios_to_optimal"].panels[0].series] == ["heuristic"]
    snp = specs["snp_chi2"].panels[0]
    assert {s.dash for s in snp.series} == {"solid", "dot"} and all(s.has_errors for s in snp.series)
    cq = specs["count_queries"]
    assert (cq.columns, cq.rows, cq.legend) == (2, 2, "right") and all(p.ylog for p in cq.panels)
    assert len(cq.legend_series()) == 5
    avd = specs["avd"].panels[0]
    assert [s.label for s in avd.series] == ["family", "heuristic", "kronecker", "optimal", "rr_clusters"]
    assert avd.xticks == (2, 3, 4, 5) and avd.title == "toy: AVD of estimated marginals, whole-record ε 7"
    marginal = specs["marginal"].panels[0]
    assert [s.kind for s in marginal.series] == ["bars"] * 3 and marginal.series[2].has_errors
    assert [s.color for s in marginal.series] == list(figures.SHARE_COLORS.values())
    assert marginal.xtick_labels == ("30-39", "40-49", "a very long…")
    assert marginal.series[2].err_high == pytest.approx((0.05, 0.05, 0.05))
    assert marginal.title.startswith("age: Kronecker (GRR per attribute), ε of the column 1.250")


def test_the_renderer_is_found_through_its_entry_point():
    assert figures.renderer() is figure_render.render


@pytest.mark.parametrize("kind", ["ratios_to_sum", "ratios_to_optimal", "snp_chi2", "count_queries", "avd", "marginal"])
def test_every_figure_renders_as_png(specs, kind, tmp_path, qapp):
    spec = specs[kind]
    path = tmp_path / f"{kind}.png"
    figure_render.render(spec, str(path), "png")
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    pixels = _pixels(path)
    assert pixels.shape[:2] == (spec.height_px, spec.width_px)
    assert _near(pixels, "#ffffff", 0) > 0.5 * pixels.shape[0] * pixels.shape[1]  # a white page with curves
    colors = {s.color for p in spec.panels for s in p.series}
    for color in colors:  # every curve's colour is drawn (not a blank or one-colour image)
        assert _near(pixels, color) >= 30, (color, kind)
    assert len(np.unique(pixels.reshape(-1, 3) // 32, axis=0)) >= len(colors) + 2


@pytest.mark.parametrize("kind", ["ratios_to_sum", "count_queries", "avd", "marginal"])
def test_every_figure_renders_as_svg_with_its_labels_and_colours(specs, kind, tmp_path, qapp):
    spec = specs[kind]
    path = tmp_path / f"{kind}.svg"
    figure_render.render(spec, str(path), "svg")
    text = path.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text[:2000]
    for panel in spec.panels:
        assert panel.title in text
    for color in {s.color for p in spec.panels for s in p.series}:
        assert color.lower() in text.lower(), (color, kind)
    with pytest.raises(ValueError):
        figure_render.render(spec, str(tmp_path / "x.pdf"), "pdf")


def test_render_writes_atomically_with_the_installed_renderer(specs, tmp_path, qapp, monkeypatch):
    calls = []

    def record(spec, path, fmt):
        calls.append((path, fmt))
        figure_render.render(spec, path, fmt)

    monkeypatch.setattr(figures, "renderer", lambda: record)
    final = output.plot_avd(_avd_rows(), str(tmp_path / "sub" / "avd.png"))  # folder created
    assert len(calls) == 1 and os.path.dirname(calls[0][0]) == str(tmp_path / "sub") and calls[0][0] != final
    assert calls[0][1] == "png" and os.listdir(tmp_path / "sub") == ["avd.png"]
    assert _pixels(final).shape[:2] == (495, 770)
    output.plot_avd(_avd_rows(), str(tmp_path / "sub" / "avd.svg"))
    assert calls[-1][1] == "svg" and sorted(os.listdir(tmp_path / "sub")) == ["avd.png", "avd.svg"]

    def broken(spec, path, fmt):
        with open(path, "wb") as fh:
            fh.write(b"\x89PNG half")
        raise OSError("disk full")

    monkeypatch.setattr(figures, "renderer", lambda: broken)
    with pytest.raises(OSError):
        figures.render(specs["avd"], str(tmp_path / "sub" / "broken.png"))
    assert sorted(os.listdir(tmp_path / "sub")) == ["avd.png", "avd.svg"]  # nothing under the final name, no temp
    with pytest.raises(InputError, match="must end in .png or .svg"):
        figures.render(specs["avd"], str(tmp_path / "sub" / "avd.jpg"))
    monkeypatch.setattr(figures, "renderer", lambda: None)
    with pytest.raises(InputError, match="optrr_gui"):
        figures.render(specs["avd"], str(tmp_path / "sub" / "none.png"))
    assert sorted(os.listdir(tmp_path / "sub")) == ["avd.png", "avd.svg"]


def test_renderer_refuses_other_threads(specs, tmp_path, qapp):
    errors = []

    def draw():
        try:
            figure_render.render(specs["avd"], str(tmp_path / "t.png"), "png")
        except RuntimeError as exc:
            errors.append(str(exc))

    t = threading.Thread(target=draw)
    t.start()
    t.join()
    assert errors and "thread" in errors[0] and not (tmp_path / "t.png").exists()


def test_legend_best_place_avoids_the_data():
    top = SeriesSpec(range(11), [10.0] * 11, label="top")
    low_left = SeriesSpec([0, 1, 2, 3], [0, 1, 2, 0], label="low", kind="points")
    panel = PanelSpec([top, low_left])
    assert legend_place(panel, (0.3, 0.3)) == "lower right"
    assert legend_place(PanelSpec([top], legend="upper left"), (0.3, 0.3)) == "upper left"
    # on a log axis the fractions are of log10(y): 1e-3 sits at the bottom, 1 and 10 near the top
    logs = PanelSpec([SeriesSpec([0, 1, 2, 3, 4, 5], [1e-3, 1e-3, 1e-3, 1, 10, 10])], ylog=True)
    assert legend_place(logs, (0.3, 0.3)) == "upper left"


def test_specs_reject_inconsistent_input():
    with pytest.raises(ValueError):
        SeriesSpec([1, 2], [1])
    with pytest.raises(ValueError):
        SeriesSpec([1], [1], color="tab:red")
    with pytest.raises(ValueError):
        SeriesSpec([1], [1], err_low=[0.1])
    with pytest.raises(ValueError):
        PanelSpec([], legend="somewhere")
    with pytest.raises(ValueError):
        FigureSpec([])
    with pytest.raises(ValueError):
        PanelSpec([], xticks=[1, 2], xtick_labels=["one"])
    with pytest.raises(ValueError):
        SeriesSpec([1], [1], kind="bars", bar_width=0)


def test_log_axis_ticks_label_decades():
    majors, minors = _log_ticks([0.004, 0.03, 0.15])
    labelled = {t for _v, t in majors}
    assert {"0.01", "0.1"} <= labelled and all(t == "" for _v, t in minors)
    majors, minors = _log_ticks([0.02, 0.05])  # no decade inside the range: the 2..9 ticks are labelled
    assert {"0.02", "0.03", "0.05"} <= {t for _v, t in minors}


CHILD = textwrap.dedent(
    """
    import contextlib, io, json, os, sys
    from optrr_engine.cli.main import main
    import optrr_engine.compare.figures as figures

    out = sys.argv[1]
    args = ["compare", "ratios", "--ks", "3", "--sets", "2", "--seed", "1", "--out"]
    with contextlib.redirect_stdout(io.StringIO()):
        rc_csv = main(args + [os.path.join(out, "csv"), "--csv"])
    qt_after_csv = any(m.startswith(("PySide6", "pyqtgraph")) for m in sys.modules)
    installed = figures.renderer
    figures.renderer = lambda: None  # as if optrr_gui were not installed
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc_without = main(args + [os.path.join(out, "without")])
    figures.renderer = installed
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        rc_with = main(args + [os.path.join(out, "with"), "--png", "--svg"])
    from PySide6.QtGui import QGuiApplication

    print(json.dumps({
        "rc_csv": rc_csv, "qt_after_csv": qt_after_csv,
        "rc_without": rc_without, "stderr_without": err.getvalue(), "rc_with": rc_with,
        "printed_with": printed.getvalue(), "platform": QGuiApplication.platformName(),
    }))
    """
)


def test_cli_draws_png_and_svg_offscreen_and_loads_qt_only_to_draw(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, env=env, timeout=180
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # CSV only: no figure, so Qt is never imported
    assert result["rc_csv"] == 0 and not result["qt_after_csv"]
    assert os.listdir(tmp_path / "csv") == ["ratios_fixed_sizes.csv"]
    # no renderer installed: one error line, exit 2; the CSV (written before the figures) is there, nothing else
    assert result["rc_without"] == 2
    lines = result["stderr_without"].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("optrr: error: figures need the OptRR desktop package")
    assert os.listdir(tmp_path / "without") == ["ratios_fixed_sizes.csv"]
    # with the installed renderer: PNG and SVG only (--png --svg), offscreen (no display was available)
    assert result["rc_with"] == 0 and result["platform"] == "offscreen"
    stems = ["ratios_fixed_sizes_heuristic_to_optimal", "ratios_fixed_sizes_to_sum"]
    names = sorted(f"{stem}.{fmt}" for stem in stems for fmt in ("png", "svg"))
    assert sorted(os.listdir(tmp_path / "with")) == names
    for name in names:
        assert f"wrote {tmp_path / 'with' / name}" in result["printed_with"]
    for stem in stems:
        pixels = _pixels(tmp_path / "with" / f"{stem}.png")
        assert pixels.shape[:2] == (374, 352)
        assert _near(pixels, figures.STYLE["heuristic"][0]) >= 30
        svg = (tmp_path / "with" / f"{stem}.svg").read_text(encoding="utf-8")
        assert "k = 3" in svg and figures.STYLE["heuristic"][0] in svg.lower()
