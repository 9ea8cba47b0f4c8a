"""Cell values of typed formats (Excel, SPSS, Stata, Parquet) as text, the same way every time.

Whole numbers print without a decimal point (3.0 -> "3"), other floats in their shortest round-trip form,
dates and times in ISO 8601, booleans as "true"/"false"; missing values (None, NaN, NaT) become None.
"""

from __future__ import annotations

import datetime as _dt
import math

#: Whole floats up to this magnitude print as integers.
INTEGRAL_LIMIT = 1e15


def format_number(x: float) -> str | None:
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == math.floor(x) and abs(x) < INTEGRAL_LIMIT:
        return str(int(x))
    return repr(float(x))


def format_value(v) -> str | None:
    """Text of one cell; None for a missing value."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return format_number(v)
    if isinstance(v, _dt.datetime):
        if v.hour == v.minute == v.second == v.microsecond == 0:
            return v.date().isoformat()
        return v.isoformat(sep=" ")
    if isinstance(v, (_dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, _dt.timedelta):
        return str(v)
    try:  # numpy scalars, pandas Timestamp / NaT / NA
        import numpy as np
        import pandas as pd

        if v is pd.NaT or v is pd.NA:
            return None
        if isinstance(v, pd.Timestamp):
            return format_value(v.to_pydatetime())
        if isinstance(v, np.bool_):
            return "true" if bool(v) else "false"
        if isinstance(v, np.integer):
            return str(int(v))
        if isinstance(v, np.floating):
            return format_number(float(v))
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    return str(v)


def string_array(values):
    """A pyarrow string array of the formatted values."""
    import pyarrow as pa

    return pa.array([format_value(v) for v in values], type=pa.string())
