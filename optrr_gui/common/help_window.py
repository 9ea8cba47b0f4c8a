"""The guide inside the application, offline: ``docs/gui.md`` rendered by Qt's Markdown reader in a help
window (its pictures from ``docs/img``), opened at the section of the current tab (F1).

The bundle carries ``docs/*.md`` and ``docs/img`` (packaging/optrr.spec), found through ``sys._MEIPASS``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImageReader, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLineEdit, QPushButton, QTextBrowser, QVBoxLayout

#: The guide's section for each tab (its heading text).
TAB_SECTIONS = ("Design tab", "Data tab", "Compare tab", "Analyse a release")


def docs_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "docs"
    return Path(__file__).resolve().parents[2] / "docs"


def guide_path() -> Path:
    return docs_dir() / "gui.md"


class HelpWindow(QDialog):
    """A non-modal window with the guide, a find box and section jumps."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("OptRR guide")
        self.setWindowFlag(Qt.WindowType.Window)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(True)
        self.browser.setSearchPaths([str(docs_dir())])
        self.find_box = QLineEdit()
        self.find_box.setPlaceholderText("Find in the guide (Enter: next)")
        self.find_box.returnPressed.connect(lambda: self.find(self.find_box.text()))
        top = QHBoxLayout()
        for title in TAB_SECTIONS:
            button = QPushButton(title.replace(" tab", ""))
            button.setToolTip(f"Go to '{title}'")
            button.clicked.connect(lambda _c=False, t=title: self.show_section(t))
            top.addWidget(button)
        top.addWidget(self.find_box, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.browser, 1)
        self.current_section: str | None = None
        self._natural_widths: dict[str, int] = {}
        self.load()

    def load(self) -> bool:
        path = guide_path()
        if not path.exists():
            self.browser.setPlainText(f"The guide ({path}) is not installed with this copy of OptRR.")
            return False
        self.browser.setMarkdown(path.read_text(encoding="utf-8"))
        return True

    def fit_images(self) -> None:
        """Draw each picture at most as wide as the page (the screenshots are 1280 px wide): scaled down, never
        up, so the guide never scrolls sideways."""
        doc = self.browser.document()
        room = max(100, int(self.browser.viewport().width() - 2 * doc.documentMargin()) - 4)
        block = doc.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                if fragment.isValid() and fragment.charFormat().isImageFormat():
                    image = fragment.charFormat().toImageFormat()
                    width = min(self._natural_width(image.name()), room)
                    if width > 0 and image.width() != width:
                        image.setWidth(width)
                        image.clearProperty(QTextFormat.Property.ImageHeight)  # height follows the width
                        cursor = QTextCursor(doc)
                        cursor.setPosition(fragment.position())
                        cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                        cursor.setCharFormat(image)
                it += 1
            block = block.next()

    def _natural_width(self, name: str) -> int:
        if name not in self._natural_widths:
            self._natural_widths[name] = QImageReader(str(docs_dir() / name)).size().width()
        return self._natural_widths[name]

    def showEvent(self, event) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self._relayout)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.isVisible():
            QTimer.singleShot(0, self._relayout)

    def _relayout(self) -> None:
        """At the final size: pictures fitted, and the current section still at the top."""
        self.fit_images()
        if self.current_section:
            self.show_section(self.current_section)

    def find(self, text: str) -> bool:
        if not text:
            return False
        if self.browser.find(text):
            return True
        self.browser.moveCursor(self.browser.textCursor().MoveOperation.Start)
        return self.browser.find(text)

    def show_section(self, heading: str) -> bool:
        """Scroll so that the heading ``heading`` is at the top."""
        doc = self.browser.document()
        cursor = doc.find(heading, 0, QTextDocument.FindFlag.FindCaseSensitively)
        while not cursor.isNull() and cursor.block().blockFormat().headingLevel() == 0:
            cursor = doc.find(heading, cursor, QTextDocument.FindFlag.FindCaseSensitively)
        if cursor.isNull():
            return False
        self.browser.setTextCursor(cursor)
        top = doc.documentLayout().blockBoundingRect(cursor.block()).top()
        self.browser.verticalScrollBar().setValue(int(top))
        self.current_section = heading
        return True
