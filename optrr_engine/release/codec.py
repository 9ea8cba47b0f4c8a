"""Column values <-> integer codes 0..a_i-1 of the perturbed attributes, as the configuration says.

Nominal / ordinal column: code = position of the text in ``categories``. Numeric column: values that read
as numbers (decimal mark from the reader) fall into bins (codes 0..m-1, labels from the edges); other texts
must be listed in ``categories`` and get the codes after the bins. A column's ``recode`` (:mod:`.recode`)
maps input texts to released labels first (merge, rename). Missing values (empty cells and any of
``missing_values``) become the category ``missing_label`` ("NA") with ``missing: "category"``, or leave the
row out of the release with ``missing: "exclude"``; the codebook names only the generic markers among
``missing_values`` and counts the other texts (:meth:`ColumnCodec.codebook`). In a nominal or ordinal column, a
value the configuration does not list is an error that names the column and the value (a release never silently
merges or drops unknown values). In a numeric column, a text that is neither a number nor listed (say a note
with a name in ``age``) is released as missing and counted per column (``Codec.unlisted``): such a text
is never copied anywhere unless the user lists it in ``categories``.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import MAX_CATEGORIES, first_duplicate
from .bins import assign, bin_labels, bins_to_json, format_edge
from .column_stats import OUTSIDE_BINS, numeric_values
from .config import ReleaseConfig
from .recode import recode_arrow, released_label, source_map
from .schema import MISSING_MARKERS

#: Markers in the per-value code table.
MISSING = -2
UNKNOWN = -3
UNLISTED = -4
NOT_LISTED = -5  # a text of a nominal or ordinal column that is not among its categories (refused)
OUTSIDE = -6  # a number of a numeric column outside its bin edges (refused)
PENDING = -7  # a number of a numeric column whose bin edges are not computed yet (a preview codec only)

#: :meth:`ColumnCodec.released_labels` of a number while the column's bin edges are computed at release time.
BIN_AT_RELEASE = "a bin (computed at release)"
#: :meth:`ColumnCodec.released_labels` of a missing value when the column's missing rows are left out.
ROW_LEFT_OUT = "(row left out)"


def _show(values, limit: int = 3) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


class ColumnCodec:
    """The codes of one perturbed column. With ``check=False`` (a preview: :meth:`released_labels` only, never
    :meth:`encode`), a configuration the release would refuse is accepted: a numeric column may lack its bin
    edges (computed at release time), and the categories are not checked (duplicates, fewer than two, too many)."""

    def __init__(self, cfg, decimal: str = ".", check: bool = True):
        self.name = cfg.name
        self.type = cfg.type
        self.missing = cfg.missing
        self.missing_label = cfg.missing_label
        self.missing_values = list(cfg.missing_values)
        self.recode = source_map(cfg.recode)
        self.decimal = decimal
        if cfg.type == "numeric":
            if not cfg.bins or "edges" not in cfg.bins or cfg.bins["edges"] is None:
                if check:
                    raise InputError(f"column {cfg.name!r}: numeric bins need edges; run optrr schema or list them")
                self.edges: list[float] | None = None
            else:
                self.edges = [float(e) for e in cfg.bins["edges"]]
            self.bins: dict | None = dict(cfg.bins) if self.edges is not None else None
            self.extras = list(cfg.categories or [])
            self.labels = (bin_labels(self.edges) if self.edges is not None else []) + self.extras
        else:
            self.edges = None
            self.bins = None
            self.extras = list(cfg.categories or [])
            self.labels = list(self.extras)
        listed = set(self.labels)
        #: recode labels that are not among the categories (the release refuses them; a preview shows them)
        self.unlisted_targets = [t for t in dict.fromkeys(self.recode.values()) if t not in listed]
        self.unlisted = 0  # cells of a numeric column that were neither numbers nor listed: released as missing
        #: the label of the missing-value category (after recoding)
        self.missing_as = released_label(self.missing_label, cfg.recode)
        if self.missing == "category" and self.missing_as in self.labels:
            self.missing_code: int | None = self.labels.index(self.missing_as)
        else:
            self.missing_code = None
        if check:
            self._check()

    def _check(self) -> None:
        """Refuse categories the release cannot encode: listed twice, fewer than two, too many."""
        dup = first_duplicate(self.labels)
        if dup is not None:
            raise InputError(f"column {self.name!r}: the category {dup!r} is listed twice (bins and categories)")
        if len(self.labels) < 2:
            only = repr(self.labels[0]) if self.labels else "none"
            raise InputError(
                f"column {self.name!r} has only one category ({only}); randomizing it releases nothing - "
                "set its role to drop (or keep)"
            )
        if len(self.labels) > MAX_CATEGORIES:
            raise InputError(f"column {self.name!r} has {len(self.labels):,} categories; at most {MAX_CATEGORIES:,}")

    @property
    def size(self) -> int:
        return len(self.labels)

    def label_array(self):
        import pyarrow as pa

        return pa.array(self.labels, type=pa.string())

    def _rule(self, values) -> np.ndarray:
        """The release's rule, per distinct text (a string Arrow array), in its order: MISSING for a missing-value
        text; then a recoded text's label (so a recoded "-9" is not binned as a number); then a number's bin in a
        numeric column (OUTSIDE outside the edges, PENDING while they are not computed); then a listed category;
        else UNLISTED (a numeric column: released as missing) or NOT_LISTED (refused). A code >= 0 is a position
        in ``labels`` followed by ``unlisted_targets``."""
        import pyarrow as pa
        import pyarrow.compute as pc

        codes = np.full(len(values), UNKNOWN, dtype=np.int64)
        if self.missing_values:
            listed = pc.is_in(values, value_set=pa.array(self.missing_values, pa.string()))
            codes[np.asarray(listed.to_numpy(zero_copy_only=False), dtype=bool)] = MISSING
        if self.recode:
            position = {label: i for i, label in enumerate(self.labels + self.unlisted_targets)}
            targets = np.asarray([position[t] for t in self.recode.values()], dtype=np.int64)
            found = pc.index_in(values, value_set=pa.array(list(self.recode), type=pa.string()))
            found = np.asarray(pc.fill_null(found, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
            hit = (found >= 0) & (codes == UNKNOWN)
            codes[hit] = targets[found[hit]]
        offset = 0
        if self.type == "numeric":  # its numbers fall into bins
            is_num, numbers = numeric_values(values, self.decimal)
            rows = np.flatnonzero(is_num)
            keep = codes[rows] == UNKNOWN  # a missing-value or recoded text may look like a number (e.g. -9)
            rows, numbers = rows[keep], numbers[keep]
            if self.edges is None:
                codes[rows] = PENDING
            else:
                idx, outside = assign(numbers, self.edges)
                codes[rows] = np.where(outside, OUTSIDE, idx)
                offset = len(self.edges) - 1
        todo = np.flatnonzero(codes == UNKNOWN)
        if todo.size:
            found = pc.index_in(values.take(pa.array(todo)), value_set=pa.array(self.extras, type=pa.string()))
            found = found.to_numpy(zero_copy_only=False)
            ok = ~np.isnan(found) if found.dtype.kind == "f" else np.ones(todo.size, dtype=bool)
            codes[todo[ok]] = found[ok].astype(np.int64) + offset
            if self.type == "numeric":
                codes[todo[~ok]] = UNLISTED
            else:
                codes[todo[~ok]] = NOT_LISTED  # an error once encode() knows their rows
        return codes

    def _value_codes(self, values) -> np.ndarray:
        """Code of each distinct text by :meth:`_rule` (MISSING for missing-value texts; NOT_LISTED for a text of a
        nominal or ordinal column that is not among its categories, which :meth:`encode` refuses with its rows).
        Refuses a recode label that is not among the categories, a number outside the bin edges, and a numeric
        column without edges."""
        if self.unlisted_targets:
            raise InputError(
                f"column {self.name!r}: recode label {self.unlisted_targets[0]!r} is not among its categories; "
                "add it there"
            )
        if self.type == "numeric" and self.edges is None:
            raise InputError(f"column {self.name!r}: numeric bins need edges; run optrr schema or list them")
        codes = self._rule(values)
        outside = np.flatnonzero(codes == OUTSIDE)
        if outside.size and self.edges is not None:  # (only a numeric column, with its edges, has such numbers)
            bad = [values[int(r)].as_py() for r in outside[:3]]
            raise InputError(
                f"column {self.name!r}: value {_show(bad)} lies outside its bin edges "
                f"[{format_edge(self.edges[0])}, {format_edge(self.edges[-1])}]; widen the edges"
            )
        return codes

    def released_labels(self, texts) -> list[str]:
        """The label each of ``texts`` (distinct texts of the column, e.g. a summary's values) is released as, by
        the rule :meth:`encode` applies (:meth:`_rule`), in its order:

        - a missing-value text: the missing-value category (``missing_label`` after recoding), or ROW_LEFT_OUT
          when the column's ``missing`` is "exclude";
        - a recoded text: its recode label;
        - a number of a numeric column: its bin's label; BIN_AT_RELEASE while the edges are not computed
          (a ``check=False`` codec); OUTSIDE_BINS outside the edges;
        - a listed category: itself;
        - any other text: in a numeric column, released as missing (as above); in a nominal or ordinal column,
          itself (the release refuses it: :meth:`not_listed`).

        Never raises for what the release would refuse (a recode label not among the categories is returned as
        it is), so a configuration can be previewed while it is being edited."""
        import pyarrow as pa

        texts = [str(t) for t in texts]
        codes = self._rule(pa.array(texts, type=pa.string()))
        labels = self.labels + self.unlisted_targets
        missing = ROW_LEFT_OUT if self.missing == "exclude" else self.missing_as
        other = {MISSING: missing, UNLISTED: missing, PENDING: BIN_AT_RELEASE, OUTSIDE: OUTSIDE_BINS}
        return [labels[c] if c >= 0 else other.get(c, t) for t, c in zip(texts, codes.tolist(), strict=True)]

    def not_listed(self, texts) -> list[str]:
        """The texts among ``texts`` (distinct values of the column) that :meth:`encode` refuses: in a nominal or
        ordinal column, neither among its categories nor recoded nor a missing-value text ([] in a numeric column,
        whose unlisted texts are released as missing)."""
        import pyarrow as pa

        texts = [str(t) for t in texts]
        codes = self._value_codes(pa.array(texts, type=pa.string()))
        return [t for t, c in zip(texts, codes, strict=True) if c == NOT_LISTED]

    def _refuse_not_listed(self, values, value_codes, index, first_row: int) -> None:
        """Values of a nominal or ordinal column that are not among its categories: an error naming them and the
        data rows (1-based, counted from the first data row of the file) where they first occur."""
        import pyarrow as pa

        bad_ids = np.flatnonzero(value_codes == NOT_LISTED)
        bad = sorted(values.take(pa.array(bad_ids)).to_pylist())
        rows = np.flatnonzero(np.isin(index, bad_ids))
        shown = ", ".join(f"{first_row + int(r) + 1:,}" for r in rows[:5])
        more = f" and {rows.size - 5:,} more in this part of the file" if rows.size > 5 else ""
        raise InputError(
            f"column {self.name!r} has values that are not among its categories: {_show(bad)} "
            f"(in data row{'s' if rows.size > 1 else ''} {shown}{more}); add them to its categories (or "
            "recode them) or run optrr schema again"
        )

    def encode(self, col, first_row: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(codes with -1 on excluded rows, excluded mask) of a string Arrow column. Each distinct text is
        looked up once (dictionary encoding), then codes are gathered per row."""
        from ..io.arrow_codes import dictionary_codes

        index, distinct = dictionary_codes(col)
        n = len(index)
        value_codes = self._value_codes(distinct)
        if value_codes.size and (value_codes == NOT_LISTED).any():
            self._refuse_not_listed(distinct, value_codes, index, first_row)
        codes = np.where(index >= 0, value_codes[index] if value_codes.size else MISSING, MISSING)
        unlisted = codes == UNLISTED
        if unlisted.any():
            self.unlisted += int(unlisted.sum())
            codes[unlisted] = MISSING
        missing = codes == MISSING
        excluded = np.zeros(n, dtype=bool)
        if missing.any():
            if self.missing == "exclude":
                excluded = missing
                codes[missing] = -1
            elif self.missing_code is None:
                # name the missing values that occur: empty cells, texts of missing_values, a numeric column's texts
                listed = [t for t, c in zip(distinct.to_pylist(), value_codes.tolist(), strict=True) if c == MISSING]
                empty = bool((index < 0).any())
                what = ["empty cells"] if empty else []
                if listed:
                    what.append(f"{_show(listed)}, listed in its missing_values")
                if unlisted.any():
                    what.append("texts that are not numbers (released as missing)")
                way_out = f"add {self.missing_as!r} to its categories or set its missing to exclude"
                if listed and not empty and not unlisted.any():  # only listed texts: they may be categories instead
                    them = "them" if len(listed) > 1 else "it"
                    way_out += f" (or take {_show(listed)} out of missing_values and add {them} to its categories)"
                raise InputError(
                    f"column {self.name!r} has missing values ({' and '.join(what)}) but {self.missing_as!r}, its "
                    f"missing-value category, is not among its categories; {way_out}"
                )
            else:
                codes[missing] = self.missing_code
        return codes, excluded

    def codebook(self) -> dict:
        """The column as the recipient's manifest describes it. Of ``missing_values`` it names only the generic
        missing-value markers (:data:`.schema.MISSING_MARKERS`, e.g. "?"); any other text treated as missing (a
        value of the source moved to missing, say a rare category) is only counted, as ``missing_values_other``."""
        d = {
            "name": self.name,
            "type": self.type,
            "categories": list(self.labels),
            "missing": self.missing,
            "missing_category": self.labels[self.missing_code] if self.missing_code is not None else None,
        }
        markers = [v for v in self.missing_values if v in MISSING_MARKERS]
        if markers:
            d["missing_values"] = markers
        if len(markers) < len(self.missing_values):
            d["missing_values_other"] = len(self.missing_values) - len(markers)
        if self.bins is not None:
            d["bins"] = bins_to_json(self.bins)
            d["bin_labels"] = bin_labels(self.edges)
        return d


class Codec:
    """Codes of the perturbed columns (configuration order). ``attributes`` names them, ``sizes`` gives
    a_i; ``kept`` names the columns copied unchanged; ``columns`` is the output column order."""

    def __init__(self, config: ReleaseConfig, decimal: str | None = None):
        config.validate()
        config.check_releasable()
        decimal = decimal or (config.input or {}).get("decimal") or "."
        self.config = config
        self.specs = [ColumnCodec(c, decimal) for c in config.perturbed()]
        self.attributes = [s.name for s in self.specs]
        self.sizes = np.array([s.size for s in self.specs], dtype=np.int64)
        self.kept = [c.name for c in config.kept()]
        self.kept_recode = {c.name: c.recode for c in config.kept()}
        self.columns = [c.name for c in config.released()]
        self.dtype = np.int16 if self.sizes.max() < 2**15 else np.int32

    @property
    def input_columns(self) -> list[str]:
        return list(self.columns)

    def encode_table(self, table, first_row: int = 0) -> tuple[np.ndarray, np.ndarray, dict]:
        """(codes (n_kept, k), positions of the rows kept, excluded-row count per column) of a string table."""
        n = table.num_rows
        codes = np.empty((n, len(self.specs)), dtype=self.dtype)
        excluded_any = np.zeros(n, dtype=bool)
        excluded_by: dict[str, int] = {}
        for j, spec in enumerate(self.specs):
            col_codes, excluded = spec.encode(table.column(spec.name), first_row)
            codes[:, j] = np.where(excluded, 0, col_codes)
            if excluded.any():
                excluded_by[spec.name] = int(excluded.sum())
                excluded_any |= excluded
        rows = np.flatnonzero(~excluded_any)
        if rows.size == n:
            return codes, rows, excluded_by
        return codes[rows], rows, excluded_by

    def encode_rows(self, df) -> tuple[np.ndarray, np.ndarray]:
        """(codes, positions of the rows kept) of a pandas DataFrame of text values (NaN = missing)."""
        return self.encode_table(frame_to_table(df, self.attributes))[:2]

    def encode(self, df) -> np.ndarray:
        """Codes (n, k) of a DataFrame; rows excluded by a ``missing: "exclude"`` column are left out."""
        return self.encode_rows(df)[0]

    def decode(self, codes):
        """A DataFrame of the category labels of ``codes`` (n, k)."""
        import pandas as pd

        codes = np.asarray(codes)
        data = {}
        for j, spec in enumerate(self.specs):
            labels = np.asarray(spec.labels, dtype=object)
            data[spec.name] = labels[codes[:, j]]
        return pd.DataFrame(data, columns=self.attributes, dtype=object)

    def output_table(self, codes: np.ndarray, kept=None):
        """The release table: perturbed columns as dictionary arrays (codes + labels), kept columns as
        they were read, in configuration order."""
        import pyarrow as pa

        index_type = pa.int16() if self.dtype == np.int16 else pa.int32()
        arrays = {}
        for j, spec in enumerate(self.specs):
            column = np.ascontiguousarray(codes[:, j])
            labels = spec.label_array()
            if column.size and column.min() < 0:  # cells a sampling design does not report
                column, labels = self._not_reported(column, spec, labels)
            indices = pa.array(column, type=index_type)
            arrays[spec.name] = pa.DictionaryArray.from_arrays(indices, labels)
        for name in self.kept:
            arrays[name] = recode_arrow(kept.column(name), self.kept_recode[name])
        return pa.table([arrays[n] for n in self.columns], names=self.columns)

    @staticmethod
    def _not_reported(column, spec, labels):
        """Code NOT_REPORTED becomes one extra dictionary entry, NOT_REPORTED_LABEL (never a category)."""
        import pyarrow as pa

        from ..sampling.design import NOT_REPORTED_LABEL

        if NOT_REPORTED_LABEL in [str(v) for v in spec.labels]:
            raise InputError(
                f"column {spec.name!r} has a category {NOT_REPORTED_LABEL!r}, the marker of not-reported cells; "
                "rename that category"
            )
        marker = len(labels)
        return np.where(column < 0, marker, column), pa.concat_arrays([labels, pa.array([NOT_REPORTED_LABEL])])

    def codebook(self) -> list[dict]:
        return [s.codebook() for s in self.specs]

    @property
    def unlisted(self) -> dict[str, int]:
        """Per numeric column: cells that were neither numbers nor listed, released as missing (so far)."""
        return {s.name: s.unlisted for s in self.specs if s.unlisted}


def frame_to_table(df, columns):
    """Selected columns of a pandas DataFrame as a string Arrow table (NaN / None -> null)."""
    import pandas as pd
    import pyarrow as pa

    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"the data has no column {missing[0]!r}")
    arrays = []
    for c in columns:
        values = df[c].astype(object).where(pd.notna(df[c]), None).tolist()
        arrays.append(pa.array([None if v is None else str(v) for v in values], type=pa.string()))
    return pa.table(arrays, names=list(columns))
