"""The session, Qt-free: which file, its columns with role, type, categories and epsilon (or weight), the
design method and the budget mode. It serialises to the ``.optrr`` project JSON and converts to the engine's
``ReleaseConfig``. Views never edit it directly: every edit goes through an undo command
(``optrr_gui.common.commands``), which calls the setters below; each setter notifies listeners ONCE with
``(kind, index, field)``: kind ``"column"`` (one column), ``"columns"`` (several columns at once, index None),
``"session"``, ``"reset"`` or ``"rows"``.

Epsilon convention shown everywhere: lower = more private.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from optrr_engine.release.risk import SAFE_START_TARGET  # the safe start's whole-record budget (also optrr schema's)

ROLES = ("perturb", "keep", "drop")
TYPES = ("nominal", "ordinal", "numeric")
MISSING = ("category", "exclude")
#: Per-attribute epsilon used when the schema gives none.
DEFAULT_EPSILON = 1.0
#: Bounds of the epsilon editors (the engine accepts (0, 50]).
MIN_EPSILON = 0.01
MAX_EPSILON = 50.0
DEFAULT_TARGET_TOTAL = 4.0
PROJECT_FORMAT = "optrr-project"
PROJECT_VERSION = 1

def too_few_rows(n_rows: int | None, name: str) -> str | None:
    """Why nothing can be released from file ``name`` of ``n_rows`` data rows, in the engine's words (capitalised),
    or None. A GUI review opened a one-row file and read that its columns were dropped as likely identifiers."""
    from optrr_engine.release.schema import too_few_rows as engine_reason

    reason = engine_reason(n_rows, name)
    return reason[:1].upper() + reason[1:] if reason else None


Listener = Callable[[str, "int | None", "str | None"], None]
#: Column fields whose edit can change a column's categories, their count or its warnings (an edit of the
#: others, epsilon and weight, keeps every count: see ``data_version``).
COUNT_FIELDS = frozenset(
    {"role", "type", "categories", "bins", "missing", "missing_label", "missing_values", "warnings", "recode"}
)


@dataclass
class ColumnState:
    """One column of the data; the fields mirror the engine's ``ColumnConfig`` (``unreadable``: the reader's
    reason when it cannot read the column, e.g. a Parquet column of lists, set by the schema; such a column stays
    dropped)."""

    name: str
    role: str = "perturb"
    type: str = "nominal"
    epsilon: float | None = DEFAULT_EPSILON
    weight: float | None = 1.0
    categories: list | None = None
    bins: dict | list | None = None  # {"method": ..., "count": n, "edges": [...]} or a list of edges
    missing: str = "category"
    warnings: list = field(default_factory=list)
    missing_label: str = "NA"
    missing_values: list = field(default_factory=list)
    recode: dict | None = None  # {released label: [input texts]} (optrr_engine.release.recode)
    unreadable: str | None = None  # why the file's reader cannot read the column (Source.unreadable), or None

    def to_dict(self) -> dict:
        return copy.deepcopy(asdict(self))

    def copied_fields(self) -> dict:
        """The fields as a new dict with new lists, bins and recode (what ``to_dict`` gives, ~10x quicker: the
        values are texts, numbers, lists of texts, a flat bins dict and {label: [texts]})."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        for key in ("categories", "warnings", "missing_values"):
            if d[key] is not None:
                d[key] = list(d[key])
        if d["bins"] is not None:
            d["bins"] = copy.deepcopy(d["bins"])
        if d["recode"] is not None:
            d["recode"] = copy_value("recode", d["recode"])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ColumnState:
        known = {f.name for f in fields(cls)}
        col = cls(**{k: copy.deepcopy(v) for k, v in d.items() if k in known})
        col.validate()
        return col

    @classmethod
    def from_config(cls, cc) -> ColumnState:
        """From an engine ``ColumnConfig`` (any object with the same attribute names)."""
        d = {f.name: getattr(cc, f.name, None) for f in fields(cls)}
        d["warnings"] = list(d.get("warnings") or [])
        d["missing_values"] = list(d.get("missing_values") or [])
        if d.get("missing_label") is None:
            d["missing_label"] = "NA"
        if d.get("epsilon") is None:
            d["epsilon"] = DEFAULT_EPSILON
        if d.get("weight") is None:
            d["weight"] = 1.0
        for key, default in (("role", "perturb"), ("type", "nominal"), ("missing", "category")):
            if d.get(key) is None:
                d[key] = default
        return cls.from_dict(d)

    def validate(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"column {self.name!r}: role must be one of {', '.join(ROLES)}")
        if self.type not in TYPES:
            raise ValueError(f"column {self.name!r}: type must be one of {', '.join(TYPES)}")
        if self.missing not in MISSING:
            raise ValueError(f"column {self.name!r}: missing must be one of {', '.join(MISSING)}")
        check_epsilon(self.epsilon)
        check_weight(self.weight)


#: Column fields holding lists of texts (or numbers), and the recode {label: [texts]}: copied one level deep.
_TEXT_LISTS = frozenset({"categories", "missing_values", "warnings"})


def copy_value(name: str, value):
    """An independent copy of a column field's value. The lists of ``_TEXT_LISTS`` and the recode hold texts
    and numbers (immutable), so they are copied one level deep (a 70,000-category list in well under 1 ms,
    where ``copy.deepcopy`` takes ~30 ms); anything else is deep-copied."""
    if name in _TEXT_LISTS and type(value) is list:
        return list(value)
    if name == "recode" and type(value) is dict and all(type(v) is list for v in value.values()):
        return {k: list(v) for k, v in value.items()}
    return copy.deepcopy(value)


def check_epsilon(value) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0 or v > MAX_EPSILON:
        raise ValueError(f"epsilon must be greater than 0 and at most {MAX_EPSILON:g}; got {value!r}")
    return v


def check_weight(value) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"a weight must be a positive number; got {value!r}")
    return v


_CHECKS = {"epsilon": check_epsilon, "weight": check_weight}


class SessionState:
    """Everything a project file restores. Notifies listeners after each change."""

    def __init__(self):
        self.data_path: str | None = None
        self.reader_options: dict = {}
        self.columns: list[ColumnState] = []
        self.n_rows: int | None = None
        self.method: str = "recommended"  # or one of optrr_engine.designs.METHODS
        self.budget_mode: bool = False
        self.target_total: float = DEFAULT_TARGET_TOTAL
        self.accept_changed_epsilons: bool = False
        #: The marginals the analysis needs (optrr_gui.state.needed_marginals; None = the default).
        self.needed_marginals: dict | None = None
        #: Increases whenever the columns' categories or roles may have changed (a new file, a project, an edit
        #: of a field in COUNT_FIELDS), never on epsilon or weight edits: derived data (category counts) is
        #: computed once per version and shared.
        self.data_version = 0
        #: Safe start: nothing is releasable until the user has confirmed the columns to share.
        self.columns_chosen: bool = True
        #: The epsilon every column got at the safe start (None otherwise).
        self.start_share: float | None = None
        self._listeners: list[Listener] = []

    # -- listeners -----------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _notify(self, kind: str, index: int | None = None, name: str | None = None) -> None:
        for listener in list(self._listeners):
            listener(kind, index, name)

    # -- setters (called by undo commands) -----------------------------------------------------
    def column_value(self, index: int, name: str):
        return copy_value(name, getattr(self.columns[index], name))

    def set_column_value(self, index: int, name: str, value) -> None:
        self._set_field(index, name, value)
        self._notify("column", index, name)

    def set_column_fields(self, index: int, values: dict) -> None:
        """Set several fields of one column (e.g. a recoding's ``recode`` and ``categories``): every value is
        checked before any is set; ONE notification ``("column", index, name)`` named by the last field."""
        self.set_columns_fields({index: values})

    def set_columns_fields(self, changes: dict) -> None:
        """Set several fields of several columns (``{index: {field: value}}``, e.g. roles with the categories
        they need): every value is checked before any is set; ONE notification named by the last field of the
        last column, ``("column", index, name)`` for one column, ``("columns", None, name)`` for several."""
        changes = {i: values for i, values in changes.items() if values}
        for index, values in changes.items():
            for name, value in values.items():
                self._checked(index, name, value)
        for index, values in changes.items():
            for name, value in values.items():
                self._set_field(index, name, value)
        if not changes:
            return
        index = list(changes)[-1]
        name = list(changes[index])[-1]
        if len(changes) == 1:
            self._notify("column", index, name)
        else:
            self._notify("columns", None, name)

    def set_column_values(self, indices, name: str, values) -> None:
        """Set one field of several columns (``values[j]`` for ``indices[j]``): one change, one notification.
        Every value is checked before any is set."""
        indices, values = list(indices), list(values)
        if len(indices) != len(values):
            raise ValueError("one value per column")
        for i, v in zip(indices, values, strict=True):
            self._checked(i, name, v)
        for i, v in zip(indices, values, strict=True):
            self._set_field(i, name, v)
        self._notify("columns", None, name)

    def _checked(self, index: int, name: str, value):
        col = self.columns[index]
        if not hasattr(col, name):
            raise AttributeError(f"columns have no field {name!r}")
        if name in _CHECKS:
            value = _CHECKS[name](value)
        if name == "role" and value not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}")
        if name == "type" and value not in TYPES:
            raise ValueError(f"type must be one of {', '.join(TYPES)}")
        if name == "missing" and value not in MISSING:
            raise ValueError(f"missing must be one of {', '.join(MISSING)}")
        return value

    def _set_field(self, index: int, name: str, value) -> None:
        setattr(self.columns[index], name, copy_value(name, self._checked(index, name, value)))
        if name in COUNT_FIELDS:
            self.data_version += 1

    def session_value(self, name: str):
        return copy.deepcopy(getattr(self, name))

    def set_session_value(self, name: str, value) -> None:
        if name not in (
            "method",
            "budget_mode",
            "target_total",
            "accept_changed_epsilons",
            "columns_chosen",
            "needed_marginals",
        ):
            raise AttributeError(f"the session has no editable field {name!r}")
        if name == "needed_marginals":
            from .needed_marginals import normalised

            value = normalised(value)
        if name == "target_total":
            value = float(value)
            if not math.isfinite(value) or value <= 0:
                raise ValueError("the whole-record target must be a positive number")
        setattr(self, name, value)
        self._notify("session", None, name)

    def load_columns(
        self, data_path, reader_options: dict, columns: list[ColumnState], n_rows=None, safe_start: bool = False
    ) -> None:
        """A new file (not undoable: the undo stack is cleared by the caller); with ``safe_start``, the safe
        start's budget applied too (:meth:`safe_start`), in the same single ``"reset"`` notification."""
        self.data_path = str(data_path) if data_path is not None else None
        self.reader_options = dict(reader_options or {})
        self.columns = [ColumnState(**c.copied_fields()) for c in columns]
        self.n_rows = n_rows
        self.data_version += 1
        if safe_start:
            self._apply_safe_start()
        self._notify("reset")

    def _apply_safe_start(self) -> None:
        """A newly opened file: the proposed columns share a whole-record budget of SAFE_START_TARGET in budget
        mode (the designs are ranked by predicted error at that budget), and nothing is releasable until the
        columns are confirmed (``columns_chosen``). Each perturbed column's stored epsilon is SAFE_START_TARGET / k
        (a configuration saved in budget mode keeps even the textbook construction within the budget if its
        target is removed); switching to epsilon per column in the window starts the columns at the epsilons the
        budget's design gave them instead (``attribute_table.budget_epsilons``), so the design stays where it was.

        Budget mode since 2026-11-26: with epsilon per column, the exact designs reach a whole-record epsilon far
        below the budget proposed (16 columns of the lung cancer survey: 0.92 of 3) and give worse answers
        (predicted AVD 0.209 against 0.149 at the 3 the banner names)."""
        self.target_total = SAFE_START_TARGET
        self.budget_mode = True
        share = self.budget_share()
        for c in self.columns:
            c.epsilon = share
        self.start_share = share
        self.columns_chosen = False

    def budget_share(self) -> float:
        """SAFE_START_TARGET split equally over the perturbed columns (at most MAX_EPSILON)."""
        k = len(self.perturbed_indices())
        return min(MAX_EPSILON, max(MIN_EPSILON, round(SAFE_START_TARGET / max(1, k), 4)))

    def set_n_rows(self, n_rows: int | None) -> None:
        self.n_rows = n_rows
        self._notify("rows")

    # -- derived -------------------------------------------------------------------------
    def perturbed_indices(self) -> list[int]:
        return [i for i, c in enumerate(self.columns) if c.role == "perturb"]

    def perturbed_columns(self) -> list[ColumnState]:
        return [self.columns[i] for i in self.perturbed_indices()]

    def requested_epsilons(self) -> list[float]:
        return [float(c.epsilon) for c in self.perturbed_columns()]

    def weights(self) -> list[float]:
        return [float(c.weight) for c in self.perturbed_columns()]

    def design_request(self) -> dict:
        """What the mechanism panel computes from: a plain, comparable dict."""
        return {
            "budget_mode": bool(self.budget_mode),
            "epsilons": self.requested_epsilons(),
            "weights": self.weights(),
            "target_total": float(self.target_total),
            "names": [c.name for c in self.perturbed_columns()],
            "needed": self.needed_marginals,
        }

    # -- engine configuration ----------------------------------------------------------------
    def to_release_config(self, method: str | None = None):
        """The engine's ``ReleaseConfig`` for this session (without the unused bins of a column of categories)."""
        from optrr_engine.release.config import ColumnConfig, ReleaseConfig

        cols = []
        for c in self.columns:
            d = c.copied_fields()
            if self.budget_mode:
                d["epsilon"] = None
            if c.type != "numeric":  # bins kept by a column made nominal or ordinal (for a change back) are unused:
                d["bins"] = None  # not released, so not "bin edges from the data" (published_outside_epsilon)
            cols.append(ColumnConfig(**d))
        method = method or self.method
        from .needed_marginals import name_lists

        names = [c.name for c in self.columns if c.role == "perturb"]
        try:
            needed = name_lists(self.needed_marginals, names)
        except ValueError:  # too many to list (the release dialog refuses to release until they are fewer)
            needed = None
        from .design_summary import release_method

        method, sample_m = release_method(method)
        return ReleaseConfig(
            method=method,
            sample_m=sample_m,
            columns=cols,
            target_total=float(self.target_total) if self.budget_mode else None,
            accept_changed_epsilons=bool(self.accept_changed_epsilons),
            input=dict(self.reader_options),
            needed_marginals=needed or None,
        )

    # -- project files ---------------------------------------------------------------------
    def to_project_dict(self, project_path: str | os.PathLike | None = None) -> dict:
        data = {"path": self.data_path, "reader_options": dict(self.reader_options)}
        if self.data_path and project_path:
            try:
                data["relative_path"] = os.path.relpath(self.data_path, Path(project_path).resolve().parent)
            except ValueError:  # another drive on Windows
                pass
        return {
            "format": PROJECT_FORMAT,
            "version": PROJECT_VERSION,
            "data": data,
            "session": {
                "method": self.method,
                "budget_mode": self.budget_mode,
                "target_total": self.target_total,
                "accept_changed_epsilons": self.accept_changed_epsilons,
                "columns_chosen": self.columns_chosen,
                "needed_marginals": self.needed_marginals,
                "n_rows": self.n_rows,
            },
            "columns": [c.to_dict() for c in self.columns],
        }

    def restore_project_dict(self, d: dict, project_path: str | os.PathLike | None = None) -> None:
        if not isinstance(d, dict) or d.get("format") != PROJECT_FORMAT:
            raise ValueError("this is not an OptRR project file (format field missing)")
        if int(d.get("version", 0)) > PROJECT_VERSION:
            raise ValueError("this project was saved by a newer OptRR; update OptRR to open it")
        data = d.get("data") or {}
        path = data.get("path")
        rel = data.get("relative_path")
        if rel and project_path:
            candidate = (Path(project_path).resolve().parent / rel).resolve()
            if candidate.exists() or not (path and Path(path).exists()):
                path = str(candidate)
        columns = [ColumnState.from_dict(c) for c in d.get("columns") or []]
        session = d.get("session") or {}
        self.method = str(session.get("method", "recommended"))
        self.budget_mode = bool(session.get("budget_mode", False))
        self.target_total = float(session.get("target_total", DEFAULT_TARGET_TOTAL))
        self.accept_changed_epsilons = bool(session.get("accept_changed_epsilons", False))
        self.columns_chosen = bool(session.get("columns_chosen", True))  # older projects: chosen by their author
        from .needed_marginals import normalised

        self.needed_marginals = normalised(session.get("needed_marginals"))
        self.load_columns(path, data.get("reader_options") or {}, columns, session.get("n_rows"))

    def save_project(self, path: str | os.PathLike) -> None:
        """Write JSON atomically (temp file in the same folder, then replace)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps(self.to_project_dict(path), indent=2), encoding="utf-8")
        os.replace(tmp, path)

    def load_project(self, path: str | os.PathLike) -> None:
        try:
            d = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read project {Path(path).name}: {exc}") from None
        self.restore_project_dict(d, path)
