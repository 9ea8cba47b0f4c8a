"""Column summaries of the loaded rows (counts, shares, missing, rare values, numeric histogram), computed
once per data load in a worker thread from the data store's encoded chunks (no strings are rebuilt)."""

from __future__ import annotations

from optrr_engine.release.column_stats import summarize_coded
from optrr_engine.tasks import TaskControl


def summarize_store(store, decimal: str = ".", progress=None, cancel=None) -> dict:
    """{column name: ColumnSummary} of every column of a complete :class:`DataStore`."""
    ctl = TaskControl(progress, cancel)
    out = {}
    names = list(store.columns)
    for j, name in enumerate(names):
        ctl.check()
        out[name] = summarize_coded(name, store.column_parts(j), decimal)
        ctl.report((j + 1) / max(1, len(names)), f"summarised {j + 1} of {len(names)} columns")
    return out
