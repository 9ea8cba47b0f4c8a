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


def file_decimal(path, reader_options: dict | None) -> str:
    """The decimal mark the release reads the file with: the one given, else the one detected in the file (the
    reader's own rule; a comma detected but not given was once counted with a point, and numbers such as 67,0 lost
    the histogram and bins of their column)."""
    from optrr_engine.io.readers import ReaderOptions, detect_options

    given = (reader_options or {}).get("decimal")
    if given or not path:
        return given or "."
    return detect_options(path, ReaderOptions.from_dict(reader_options)).decimal or "."


def summarize_file_store(store, path, reader_options: dict | None, progress=None, cancel=None) -> dict:
    """:func:`summarize_store` with the file's decimal mark (:func:`file_decimal`, detected here, in the worker)."""
    return summarize_store(store, file_decimal(path, reader_options), progress, cancel)
