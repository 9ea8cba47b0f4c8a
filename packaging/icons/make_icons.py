"""Draw the OptRR icon and write it in every format the installers need.

The icon is defined once, as SVG text below (a shield holding a 3 x 3 grid of cells, some of them "flipped":
randomized response on categorical records). This script writes ``optrr.svg``, renders it with QtSvg to PNG
(``optrr.png``, 256 px, used by Linux and the Qt window), and converts the renders to ``optrr.ico`` (Windows,
16-256 px) and ``optrr.icns`` (macOS) with Pillow. The outputs are committed; run this only to change the icon:

    QT_QPA_PLATFORM=offscreen python3 packaging/icons/make_icons.py
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

BACKGROUND = "#1d5c7a"
CELL_ON = "#ffffff"
CELL_FLIPPED = "#f2a93b"


def svg_text() -> str:
    """The icon as an SVG document (256 x 256 user units)."""
    cells = []
    flipped = {(0, 2), (1, 0), (2, 1)}
    for row in range(3):
        for col in range(3):
            x, y = 83 + col * 32, 86 + row * 32
            colour = CELL_FLIPPED if (row, col) in flipped else CELL_ON
            cells.append(f'  <rect x="{x}" y="{y}" width="26" height="26" rx="5" fill="{colour}"/>')
    shield = "M128 36 L200 62 L200 126 C200 170 170 204 128 222 C86 204 56 170 56 126 L56 62 Z"
    return "\n".join(
        [
            '<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">',
            f'  <rect x="8" y="8" width="240" height="240" rx="48" fill="{BACKGROUND}"/>',
            f'  <path d="{shield}" fill="none" stroke="#ffffff" stroke-width="12" stroke-linejoin="round"/>',
            *cells,
            "</svg>",
            "",
        ]
    )


def render_png(svg: str, size: int) -> bytes:
    """Render the SVG to a square PNG of ``size`` pixels with a transparent background."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(QByteArray(svg.encode()))
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(buffer.data())


def main() -> int:
    from PIL import Image

    svg = svg_text()
    (HERE / "optrr.svg").write_text(svg, encoding="utf-8")
    renders = {size: Image.open(io.BytesIO(render_png(svg, size))) for size in (16, 24, 32, 48, 64, 128, 256, 512)}
    renders[256].save(HERE / "optrr.png")
    ico_sizes = (16, 24, 32, 48, 64, 128, 256)
    renders[256].save(
        HERE / "optrr.ico", sizes=[(s, s) for s in ico_sizes], append_images=[renders[s] for s in ico_sizes[:-1]]
    )
    renders[512].save(HERE / "optrr.icns")
    for name in ("optrr.svg", "optrr.png", "optrr.ico", "optrr.icns"):
        print(f"{name}: {(HERE / name).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
