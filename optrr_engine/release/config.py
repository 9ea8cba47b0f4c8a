"""The release configuration: which columns are perturbed (at which epsilon), kept or dropped, and how each
column's values become categories. Stored as JSON (docs/formats.md documents every key):

    {"method": "auto", "target_total": null, "columns": [
        {"name": "sex", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["F", "M"],
         "missing": "category"}, ...]}

Safe by default: a column is released only with role "perturb" (randomized) or "keep" (copied unchanged,
which must be asked for explicitly); every other column of the input, listed or not, is dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import InputError
from ..sampling.design import SAMPLING_METHODS, no_mechanism_to_copy, sample_m_weights_refusal, unequal_weights
from ..validation import check_epsilon, first_duplicate, positive_number
from .bins import bins_to_json, normalize_bins
from .recode import check_against_categories, normalize_recode

ROLES = ("perturb", "keep", "drop")
TYPES = ("nominal", "ordinal", "numeric")
MISSING_POLICIES = ("category", "exclude")
#: Category label that empty cells become when ``missing`` is "category".
MISSING_LABEL = "NA"
DEFAULT_EPSILON = 1.0
CONFIG_FORMAT = "optrr-release-config"
CONFIG_VERSION = 1
_COLUMN_KEYS = (
    "name",
    "role",
    "type",
    "epsilon",
    "weight",
    "categories",
    "bins",
    "missing",
    "missing_label",
    "missing_values",
    "recode",
    "warnings",
    "unreadable",
)
_TOP_KEYS = (
    "format",
    "version",
    "method",
    "columns",
    "target_total",
    "sample_m",
    "accept_changed_epsilons",
    "input",
    "source",
    "needed_marginals",
    "allow_unidentifiable",
    "mechanism",
)
METHOD_ALIASES = {"recommended": "auto"}
#: Keys of the nested sections (unknown keys are refused, as at the top level and in columns).
INPUT_KEYS = ("delimiter", "encoding", "decimal", "sheet", "skip_rows")
_SOURCE_KEYS = ("file", "format", "rows", "empty_rows_skipped")


def _check_section(value, name: str, known: tuple) -> None:
    if not isinstance(value, dict):
        raise InputError(f"'{name}' must be an object with the keys {', '.join(known)}")
    unknown = [k for k in value if k not in known]
    if unknown:
        raise InputError(
            f"unknown key {unknown[0]!r} in '{name}' of the release configuration (known: {', '.join(known)})"
        )


def check_column_epsilon(value, column: str) -> float:
    return check_epsilon(value, f"column {column!r}: epsilon")


def check_column_weight(value, column: str) -> float:
    return positive_number(value, f"column {column!r}: weight")


@dataclass
class ColumnConfig:
    """One input column. ``categories``: the ordered category labels (for a numeric column: the extra,
    non-numeric values kept as categories besides the bins). ``recode``: {released label: [input texts]}
    (merge / rename, :mod:`.recode`), applied to perturbed and kept columns before the categories are looked
    up. ``missing``: "category" codes empty cells (and any ``missing_values``) as the category
    ``missing_label`` (after recoding), which must be listed in ``categories``; "exclude" leaves rows with a
    missing value in this column out of the release."""

    name: str
    role: str = "drop"
    type: str = "nominal"
    epsilon: float | None = None
    weight: float | None = None
    categories: list | None = None
    bins: dict | list | None = None
    missing: str = "category"
    warnings: list = field(default_factory=list)
    missing_label: str = MISSING_LABEL
    missing_values: list = field(default_factory=list)
    recode: dict | None = None
    #: why the file's reader cannot give the column as text (``Source.unreadable``, e.g. a Parquet column of
    #: lists; set by the schema): such a column can only be dropped
    unreadable: str | None = None

    def __post_init__(self):
        self.name = str(self.name)
        if isinstance(self.bins, (list, tuple)):
            self.bins = normalize_bins(self.bins, self.name)
        self.warnings = list(self.warnings or [])
        self.missing_values = list(self.missing_values or [])
        if self.missing_label is None:
            self.missing_label = MISSING_LABEL

    def validate(self, budget_mode: bool = False) -> None:
        col = self.name
        if self.name.strip() == "":
            raise InputError("a column in the configuration has an empty name")
        if self.role not in ROLES:
            raise InputError(f"column {col!r}: role {self.role!r} is unknown; choose {', '.join(ROLES)}")
        if self.type not in TYPES:
            raise InputError(f"column {col!r}: type {self.type!r} is unknown; choose {', '.join(TYPES)}")
        if self.missing not in MISSING_POLICIES:
            raise InputError(f"column {col!r}: missing {self.missing!r} is unknown; choose category or exclude")
        if not isinstance(self.missing_label, str):
            raise InputError(f"column {col!r}: missing_label must be text")
        if self.unreadable is not None and self.role != "drop":
            raise InputError(f"column {col!r} {self.unreadable}: it cannot be released; set its role to drop")
        for what, values in (("categories", self.categories), ("missing_values", self.missing_values)):
            if values is None:
                continue
            if not isinstance(values, list):
                raise InputError(f"column {col!r}: {what} must be a list of texts")
            bad = [v for v in values if not isinstance(v, str)]
            if bad:
                hint = f"write {json.dumps(str(bad[0]))}, not {bad[0]!r}"
                raise InputError(f"column {col!r}: {what} must be texts; {hint}")
            dup = first_duplicate(values)
            if dup is not None:
                raise InputError(f"column {col!r}: {what} lists {dup!r} twice")
        self.bins = normalize_bins(self.bins, col)
        self.recode = normalize_recode(self.recode, col)
        check_against_categories(self.recode, self.categories, col)
        if self.role != "perturb":
            return
        if budget_mode:
            self.weight = check_column_weight(1.0 if self.weight is None else self.weight, col)
        else:
            if self.epsilon is None:
                raise InputError(f"column {col!r} is perturbed but has no epsilon; give one (e.g. 1.0)")
            self.epsilon = check_column_epsilon(self.epsilon, col)
        if self.type == "numeric":
            if self.bins is None:
                raise InputError(f"column {col!r} is numeric but has no bins; give bins or run optrr schema")
        elif not self.categories:
            raise InputError(f"column {col!r} is perturbed but lists no categories; run optrr schema to fill them in")

    def to_dict(self) -> dict:
        d: dict = {"name": self.name, "role": self.role, "type": self.type}
        for key in ("epsilon", "weight"):
            value = getattr(self, key)
            if value is not None:
                d[key] = float(value)
        if self.categories is not None:
            d["categories"] = list(self.categories)
        if self.bins is not None:
            d["bins"] = bins_to_json(normalize_bins(self.bins, self.name))
        d["missing"] = self.missing
        if self.missing_label != MISSING_LABEL:
            d["missing_label"] = self.missing_label
        if self.missing_values:
            d["missing_values"] = list(self.missing_values)
        if self.recode:
            d["recode"] = {k: list(v) for k, v in self.recode.items()}
        if self.warnings:
            d["warnings"] = list(self.warnings)
        if self.unreadable is not None:
            d["unreadable"] = str(self.unreadable)
        return d

    @classmethod
    def from_dict(cls, d) -> ColumnConfig:
        if not isinstance(d, dict) or "name" not in d:
            raise InputError("every entry of 'columns' must be an object with a 'name'")
        unknown = [k for k in d if k not in _COLUMN_KEYS]
        if unknown:
            known = ", ".join(_COLUMN_KEYS)
            raise InputError(f"column {str(d['name'])!r}: unknown key {unknown[0]!r} (known: {known})")
        return cls(**{k: d[k] for k in _COLUMN_KEYS if k in d})


@dataclass
class ReleaseConfig:
    """``method``: a design method of optrr_engine.designs.METHODS ("auto" by default). ``target_total``:
    total-budget mode (columns' ``weight`` shares a whole-record epsilon) instead of per-column ``epsilon``.
    ``accept_changed_epsilons``: allow a design (e.g. the heuristic) to return an attribute epsilon above
    the request. ``input``: reader options (delimiter, encoding, decimal, sheet) used by schema. ``mechanism``:
    a designed mechanism (``Mechanism.to_dict()``) to release exactly as it is, never recomputed (the GUI
    stores the one it shows); None designs anew with ``method``, except ``utility``, which needs it (the release
    is refused once the category counts are known, naming the ``optrr design`` command that writes it)."""

    method: str = "auto"
    columns: list = field(default_factory=list)
    target_total: float | None = None
    sample_m: int | None = None
    accept_changed_epsilons: bool = False
    input: dict = field(default_factory=dict)
    source: dict | None = None
    needed_marginals: list | None = None
    allow_unidentifiable: bool = False
    mechanism: dict | None = None

    @property
    def budget_mode(self) -> bool:
        return self.target_total is not None

    def column(self, name: str) -> ColumnConfig:
        for c in self.columns:
            if c.name == name:
                return c
        raise InputError(f"the configuration has no column {name!r}")

    def perturbed(self) -> list:
        return [c for c in self.columns if c.role == "perturb"]

    def kept(self) -> list:
        return [c for c in self.columns if c.role == "keep"]

    def released(self) -> list:
        """Columns written to the release, in configuration order."""
        return [c for c in self.columns if c.role in ("perturb", "keep")]

    def published_outside_epsilon(self) -> dict[str, list[str]]:
        """What this release publishes as it is, outside the epsilons, by kind (the names of the columns): "kept"
        (copied unchanged), "rows_left_out" (perturbed columns with ``missing: exclude``: whether a record appears
        shows that the value is recorded), "labels_of_dropped" (perturbed columns the schema proposed to drop: the
        codebook lists every label, e.g. every patient number), "bins_from_data" (perturbed columns whose bin edges
        are computed from the data). The one rule for the release dialog's tick and the recipient's notes."""
        from .bins import bins_from_data
        from .schema import drop_reason

        perturbed = self.perturbed()
        return {
            "kept": [c.name for c in self.kept()],
            "rows_left_out": [c.name for c in perturbed if c.missing == "exclude"],
            "labels_of_dropped": [
                c.name for c in perturbed if c.type != "numeric" and any(drop_reason(str(w)) for w in c.warnings)
            ],
            "bins_from_data": [c.name for c in perturbed if bins_from_data(c)],
        }

    def row_selection_note(self) -> str | None:
        """What a recipient must know when rows are left out by ``missing: "exclude"`` (from the configuration
        only, never from the data): the selection is a deterministic function of the raw values. Only perturbed
        columns select rows (a kept column's missing cells are copied as they are)."""
        names = self.published_outside_epsilon()["rows_left_out"]
        if not names:
            return None
        listed = ", ".join(names)
        return (
            f"rows with a missing value in {listed} are left out of this release (missing: exclude). Whether a "
            "person's record appears therefore shows that these values are recorded for them, which no epsilon "
            "protects; estimates describe only the rows released"
        )

    def validate(self) -> ReleaseConfig:
        from ..designs import METHODS

        if not isinstance(self.method, str):
            raise InputError("method must be a text such as auto, optimal or kronecker")
        self.method = METHOD_ALIASES.get(self.method, self.method)
        if self.method not in (*METHODS, "auto", "utility") and self.method not in SAMPLING_METHODS:
            known = ", ".join((*METHODS, *SAMPLING_METHODS))
            raise InputError(f"method {self.method!r} is unknown; choose one of {known}")
        self._validate_sampling()
        if self.target_total is not None:
            self.target_total = positive_number(self.target_total, "target_total")
        if not isinstance(self.accept_changed_epsilons, bool):
            raise InputError("accept_changed_epsilons must be true or false")
        if not isinstance(self.allow_unidentifiable, bool):
            raise InputError("allow_unidentifiable must be true or false")
        if self.needed_marginals is not None:
            m = self.needed_marginals
            if not isinstance(m, list) or not all(
                isinstance(s, list) and s and all(isinstance(n, str) for n in s) for s in m
            ):
                raise InputError('needed_marginals must be a list of lists of column names, e.g. [["age", "sex"]]')
        _check_section(self.input, "input", INPUT_KEYS)
        if self.source is not None:
            _check_section(self.source, "source", _SOURCE_KEYS)
        if self.mechanism is not None:
            self.given_mechanism()  # a one-line error now rather than after a pass over the data
        self.columns = [c if isinstance(c, ColumnConfig) else ColumnConfig.from_dict(c) for c in self.columns]
        seen = set()
        for c in self.columns:
            if c.name in seen:
                raise InputError(f"column {c.name!r} appears twice in the configuration")
            seen.add(c.name)
            c.validate(self.budget_mode)
        self._validate_sample_m()
        return self

    def set_mechanism(self, mechanism, method: str) -> None:
        """Give the configuration ``mechanism`` (released as it is) with the ``method`` that designed it recorded
        in it, so that the release's notes can say where it came from."""
        self.mechanism = {**mechanism.to_dict(), "method": str(method)}

    def given_mechanism(self):
        """The configuration's own mechanism (rebuilt exactly), or None."""
        from ..mechanism import Mechanism

        if self.mechanism is None:
            return None
        if not isinstance(self.mechanism, dict):
            raise InputError("'mechanism' must be an object as written by OptRR (sizes and blocks)")
        self._refuse_sampling_mechanism()
        try:
            return Mechanism.from_dict(self.mechanism)
        except InputError as exc:
            raise InputError(f"the configuration's mechanism is invalid: {exc}") from None

    def _refuse_sampling_mechanism(self) -> None:
        """A sampling design is never given as a 'mechanism' (a sampling release's manifest holds one of kind
        "sampling"), and a sampling method never releases a given one: it is designed anew from the
        configuration (the same explanation as ``optrr design --with-mechanism``)."""
        assert isinstance(self.mechanism, dict)
        given = self.mechanism.get("method")
        if self.mechanism.get("kind") == "sampling":
            method = given if given in SAMPLING_METHODS else self.method
            settings = [f'"method": "{method}"']
            target = self.mechanism.get("target_epsilon")
            if isinstance(target, (int, float)) and not isinstance(target, bool):
                settings.append(f'"target_total": {target:g}')
            m = self.mechanism.get("m")
            if method == "sample-m" and isinstance(m, int) and not isinstance(m, bool):
                settings.append(f'"sample_m": {m}')
            raise InputError(
                f"the configuration's 'mechanism' is a sampling design (as in the manifest of a {method} release): "
                f"{no_mechanism_to_copy(method)}; remove 'mechanism' and set {', '.join(settings)}"
            )
        if self.method in SAMPLING_METHODS:
            raise InputError(
                f"method {self.method} does not release a given 'mechanism': {no_mechanism_to_copy(self.method)}; "
                "remove 'mechanism', or set the method of the design it comes from"
            )

    def _validate_sampling(self) -> None:
        """Sampling designs (smp, sample-m, rsfd) are defined by a whole-record epsilon (target_total); the
        columns' weights are smp / rsfd sampling weights; sample-m needs sample_m (attributes per record, checked
        against the perturbed columns by _validate_sample_m once the columns are)."""
        if self.method not in SAMPLING_METHODS:
            if self.sample_m is not None:
                raise InputError("sample_m applies to method sample-m only")
            return
        if self.target_total is None:
            raise InputError(f"method {self.method} needs target_total, the whole-record epsilon")
        if self.method != "sample-m" and self.sample_m is not None:
            raise InputError("sample_m applies to method sample-m only")

    def _validate_sample_m(self) -> None:
        """sample_m of method sample-m: a whole number from 1 to the number of perturbed columns."""
        if self.method != "sample-m":
            return
        k = len(self.perturbed())
        upto = f"from 1 to {k} (the number of perturbed columns)" if k else "from 1 to the number of perturbed columns"
        m = self.sample_m
        if m is None:
            raise InputError(
                f"method sample-m needs sample_m, the number of columns each record reports: a whole number {upto}"
            )
        if isinstance(m, bool) or not isinstance(m, int) or m < 1 or (k and m > k):
            raise InputError(f"sample_m must be a whole number {upto}; got {m!r}")

    def check_sample_m_weights(self) -> None:
        """A configuration as written (a file, a dict) that states unequal weights for sample-m, which chooses its
        subsets uniformly, is refused rather than released without them. (An in-memory one, the GUI's, whose
        sample-m rows are uniform whatever the session's weights, writes none: :meth:`to_dict`.)"""
        if self.method != "sample-m":
            return
        cols = [c for c in self.perturbed() if c.weight is not None]
        if unequal_weights([c.weight for c in cols]):  # the engine's one rule (sampling.design)
            first = cols[0]
            other = next(c for c in cols if float(c.weight) != float(first.weight))
            raise InputError(
                sample_m_weights_refusal(
                    f"column {other.name!r} has weight {float(other.weight):g} and column {first.name!r} "
                    f'{float(first.weight):g}: remove the columns\' "weight" or make them equal'
                )
            )

    def check_releasable(self) -> None:
        if not self.perturbed():
            raise InputError("no column has role 'perturb'; choose at least one column to randomize")

    def to_dict(self) -> dict:
        d: dict = {
            "format": CONFIG_FORMAT,
            "version": CONFIG_VERSION,
            "method": self.method,
            "target_total": self.target_total,
            "accept_changed_epsilons": bool(self.accept_changed_epsilons),
        }
        if self.needed_marginals:
            d["needed_marginals"] = [list(s) for s in self.needed_marginals]
        if self.allow_unidentifiable:
            d["allow_unidentifiable"] = True
        if self.sample_m is not None:
            d["sample_m"] = self.sample_m
        if self.input:
            d["input"] = dict(self.input)
        if self.source:
            d["source"] = dict(self.source)
        if self.mechanism is not None:
            d["mechanism"] = self.mechanism
        d["columns"] = [c.to_dict() for c in self.columns]
        if self.method == "sample-m":  # uniform subsets: the columns' weights do not apply (check_sample_m_weights)
            for c in d["columns"]:
                c.pop("weight", None)
        return d

    @classmethod
    def from_dict(cls, d) -> ReleaseConfig:
        if not isinstance(d, dict):
            raise InputError("a release configuration must be a JSON object with 'method' and 'columns'")
        unknown = [k for k in d if k not in _TOP_KEYS]
        if unknown:
            raise InputError(f"unknown key {unknown[0]!r} in the release configuration (known: {', '.join(_TOP_KEYS)})")
        if "format" in d and d["format"] != CONFIG_FORMAT:
            raise InputError(f"this is not an OptRR release configuration (format {d['format']!r})")
        version = d.get("version", CONFIG_VERSION)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise InputError(f"release configuration version must be a whole number such as 1; got {version!r}")
        if version > CONFIG_VERSION:
            raise InputError(f"release configuration version {version} is newer than this OptRR reads; update OptRR")
        columns = d.get("columns")
        if not isinstance(columns, list):
            raise InputError("the release configuration needs a 'columns' list")
        cfg = cls(
            method=d.get("method", "auto"),
            columns=[ColumnConfig.from_dict(c) for c in columns],
            target_total=d.get("target_total"),
            sample_m=d.get("sample_m"),
            accept_changed_epsilons=d.get("accept_changed_epsilons", False),
            input=d.get("input") or {},
            source=d.get("source"),
            needed_marginals=d.get("needed_marginals"),
            allow_unidentifiable=d.get("allow_unidentifiable", False),
            mechanism=d.get("mechanism"),
        )
        cfg.validate()
        cfg.check_sample_m_weights()
        return cfg


def with_safe_start(cfg: ReleaseConfig) -> ReleaseConfig:
    """``cfg`` starting as the window starts a newly opened file: its perturbed columns share the whole-record epsilon
    SAFE_START_TARGET (total-budget mode: the designs are ranked by predicted error at that budget), and each has
    the epsilon SAFE_START_TARGET / k, so that removing ``target_total`` (epsilon per column) keeps even the
    textbook construction within it. A template of epsilon 1 per column released 23 census columns at whole-record
    epsilon 22.9, with only a warning."""
    from dataclasses import replace

    from .risk import SAFE_START_TARGET

    perturbed = [c for c in cfg.columns if c.role == "perturb"]
    share = SAFE_START_TARGET / max(1, len(perturbed))
    columns = [replace(c, epsilon=share) if c.role == "perturb" else c for c in cfg.columns]
    return replace(cfg, columns=columns, target_total=SAFE_START_TARGET)


def load_config(path) -> ReleaseConfig:
    from ..io.json_file import read_json

    return ReleaseConfig.from_dict(read_json(path, "configuration file"))


def save_config(cfg: ReleaseConfig, path) -> None:
    """Write the configuration as indented JSON, atomically."""
    from ..io.atomic import write_text_atomic

    text = json.dumps(cfg.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)
    write_text_atomic(path, text + "\n")
