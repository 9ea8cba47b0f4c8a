"""Job run when a file is opened: detect its columns."""

from __future__ import annotations

from optrr_engine.io.readers import ReaderOptions
from optrr_engine.release.schema import infer_schema

from ...state.session import ColumnState


def infer_columns(path: str, options: dict, progress=None, cancel=None) -> dict:
    """Worker: read the schema of a file; returns the columns as session states."""
    config = infer_schema(path, ReaderOptions.from_dict(options), progress=progress, cancel=cancel)
    return {"columns": [ColumnState.from_config(c) for c in config.columns]}
