"""Persistent settings (QSettings): recent files with their reader options, window geometry, last folders.

Tests and ``--settings`` give an INI file path so that nothing touches the user's real settings.
"""

from __future__ import annotations

import json
import os

from PySide6.QtCore import QByteArray, QSettings

ORGANIZATION = "OptRR"
APPLICATION = "OptRR"
MAX_RECENT = 10


class Settings:
    def __init__(self, path: str | os.PathLike | None = None):
        if path is not None:
            self.qs = QSettings(str(path), QSettings.Format.IniFormat)
        else:
            self.qs = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)

    def audit_dir(self) -> str:
        """Folder of the releases' internal audit record (optrr-audit.json: the privacy ledger): the engine's
        default, shared with the CLI ($OPTRR_AUDIT_DIR, else the per-user data folder OptRR/audit), so every release
        made on this account is in one ledger and the record never sits in a folder that might be sent."""
        from optrr_engine.release.audit import audit_folder

        return audit_folder()

    # -- recent files ----------------------------------------------------------------------
    def recent_files(self) -> list[dict]:
        """[{"path": ..., "options": {...}}], newest first, only files that still exist."""
        raw = self.qs.value("recent/files", "[]")
        try:
            items = json.loads(raw) if isinstance(raw, str) else []
        except json.JSONDecodeError:
            items = []
        return [i for i in items if isinstance(i, dict) and os.path.exists(str(i.get("path", "")))]

    def add_recent(self, path: str, options: dict | None = None) -> None:
        path = os.path.abspath(path)
        items = [i for i in self.recent_files() if os.path.abspath(i["path"]) != path]
        items.insert(0, {"path": path, "options": dict(options or {})})
        self.qs.setValue("recent/files", json.dumps(items[:MAX_RECENT]))
        self.qs.sync()

    def clear_recent(self) -> None:
        self.qs.setValue("recent/files", "[]")

    def options_for(self, path: str) -> dict:
        path = os.path.abspath(path)
        for item in self.recent_files():
            if os.path.abspath(item["path"]) == path:
                return dict(item.get("options") or {})
        return {}

    # -- plain values ----------------------------------------------------------------------------
    def value(self, key: str, default=None):
        v = self.qs.value(key, default)
        return default if v is None else v

    def set_value(self, key: str, value) -> None:
        self.qs.setValue(key, value)

    def last_dir(self, kind: str) -> str:
        return str(self.value(f"dirs/{kind}", os.path.expanduser("~")))

    def set_last_dir(self, kind: str, path: str) -> None:
        folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        self.qs.setValue(f"dirs/{kind}", folder)

    # -- window ----------------------------------------------------------------------------------
    def save_window(self, window) -> None:
        self.qs.setValue("window/geometry", window.saveGeometry())
        self.qs.setValue("window/state", window.saveState())
        self.qs.sync()

    def restore_window(self, window) -> bool:
        geometry = self.qs.value("window/geometry")
        state = self.qs.value("window/state")
        ok = False
        if isinstance(geometry, QByteArray | bytes) and geometry:
            ok = window.restoreGeometry(geometry)
        if isinstance(state, QByteArray | bytes) and state:
            window.restoreState(state)
        return ok

    def sync(self) -> None:
        self.qs.sync()
