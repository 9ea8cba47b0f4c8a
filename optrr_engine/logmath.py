"""Log-space helpers: values such as prod(a_i) overflow float64 (5**1000 ~ 1e699)."""

from __future__ import annotations

import numpy as np

NEG_INF = -np.inf


def logsumexp(values, axis=None) -> np.ndarray | float:
    """log(sum(exp(values))) along ``axis``; -inf for an empty or all -inf input."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return NEG_INF if axis is None else np.full(np.delete(v.shape, axis), NEG_INF)
    m = np.max(v, axis=axis, keepdims=True)
    m_safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(v - m_safe), axis=axis, keepdims=True)) + m_safe
    if axis is None:
        return float(out.reshape(()))
    return np.squeeze(out, axis=axis)


def log1pexp(x):
    """log(1 + e^x), stable for large and small x."""
    return np.logaddexp(0.0, x)


def log_excluding_each(logs: np.ndarray) -> np.ndarray:
    """For each j, log(sum_{h != j} exp(logs[h])) computed from prefix and suffix sums (no cancellation)."""
    logs = np.asarray(logs, dtype=float)
    n = logs.size
    if n == 0:
        return logs.copy()
    prefix = np.logaddexp.accumulate(np.concatenate(([NEG_INF], logs[:-1])))
    suffix = np.logaddexp.accumulate(np.concatenate(([NEG_INF], logs[::-1][:-1])))[::-1]
    return np.logaddexp(prefix, suffix)


def log_count_outside(log_total: float, count: float) -> float:
    """log(exp(log_total) - count) for 0 <= count < exp(log_total), accurate when log_total is huge."""
    if log_total < 700.0:
        total = np.exp(log_total)
        return float(np.log(total - count)) if total > count else NEG_INF
    return float(log_total + np.log1p(-np.exp(np.log(count) - log_total))) if count > 0 else float(log_total)
