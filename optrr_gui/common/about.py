"""The About box: versions of OptRR and its components, their licences, and the sample data attribution."""

from __future__ import annotations

import html
import platform
from importlib import metadata

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

from ..state.paths import ATTRIBUTION

#: (distribution, licence) of what OptRR ships with.
COMPONENTS = (
    ("optrr", "MIT"),
    ("PySide6-Essentials", "LGPL-3.0 (Qt for Python)"),
    ("shiboken6", "LGPL-3.0"),
    ("pyqtgraph", "MIT"),
    ("numpy", "BSD-3-Clause"),
    ("highspy", "MIT (the HiGHS solver)"),
    ("pandas", "BSD-3-Clause"),
    ("pyarrow", "Apache-2.0"),
    ("openpyxl", "MIT"),
    ("pyreadstat", "Apache-2.0"),
    ("scipy", "BSD-3-Clause"),
)


def version_of(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def about_html() -> str:
    from PySide6 import QtCore

    rows = []
    for dist, licence in COMPONENTS:
        v = version_of(dist)
        if v is not None:
            rows.append(f"<tr><td>{dist}</td><td>{v}</td><td>{html.escape(licence)}</td></tr>")
    rows.append(f"<tr><td>Qt</td><td>{QtCore.qVersion()}</td><td>LGPL-3.0</td></tr>")
    rows.append(f"<tr><td>Python</td><td>{platform.python_version()}</td><td>PSF</td></tr>")
    try:
        attribution = ATTRIBUTION.read_text(encoding="utf-8")
    except OSError:
        attribution = "(attribution file missing)"
    return (
        "<h2>OptRR</h2>"
        "<p>Privacy-optimized randomized response for sharing categorical data under local differential "
        "privacy, offline. Each record is randomized before it leaves your machine; the receiver estimates the "
        "true distributions. <b>Lower ε = more privacy.</b></p>"
        "<p>Method: Yamamoto &amp; Shibuya, privacy-optimized randomized response; RR-Independent / RR-Clusters "
        "of Domingo-Ferrer &amp; Soria-Comas. OptRR is released under the MIT licence.</p>"
        "<h3>Components</h3><table cellspacing='6'><tr><th align='left'>Component</th>"
        "<th align='left'>Version</th><th align='left'>Licence</th></tr>" + "".join(rows) + "</table>"
        "<h3>Sample data</h3><pre style='white-space: pre-wrap'>" + html.escape(attribution) + "</pre>"
    )


class AboutDialog(QDialog):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("About OptRR")
        self.resize(640, 560)
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(False)
        self.text.setHtml(about_html())
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.text)
        lay.addWidget(buttons)
