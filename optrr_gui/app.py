"""Entry point of ``optrr-gui``: a placeholder window until the GUI issue lands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "resources" / "sample" / "breast_cancer.csv"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="optrr-gui")
    parser.add_argument("file", nargs="?", help="data file to open (default: the bundled sample)")
    parser.add_argument("--screenshot", help="render the main window to this PNG and exit")
    args = parser.parse_args(argv)
    from PySide6.QtWidgets import QApplication, QLabel

    app = QApplication.instance() or QApplication(sys.argv[:1])
    path = Path(args.file) if args.file else SAMPLE
    label = QLabel(f"OptRR — {path.name}")
    label.resize(640, 400)
    label.show()
    if args.screenshot:
        app.processEvents()
        return 0 if label.grab().save(args.screenshot) else 1
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
