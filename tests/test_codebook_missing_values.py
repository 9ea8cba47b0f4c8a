"""The manifest's codebook names only the generic missing-value markers among a column's ``missing_values``
(``MISSING_MARKERS``, e.g. "?"); any other text treated as missing is a value of the source (say a rare category
moved to missing to hide it) and is only counted, as ``missing_values_other``. Nothing the recipient gets (the
manifest, the report) names it."""

import json

import pytest

from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import MISSING_MARKERS

HIDDEN = "HIV+"


def source(tmp_path) -> str:
    """60 rows of diagnosis,smoker: 'flu' / 'cold', three '?' and two HIDDEN diagnoses."""
    rows = [
        f"{'?' if i < 3 else HIDDEN if i < 5 else ['flu', 'cold'][i % 2]},{['yes', 'no'][i % 3 == 0]}"
        for i in range(60)
    ]
    path = tmp_path / "in.csv"
    path.write_text("\n".join(["diagnosis,smoker", *rows]) + "\n")
    return str(path)


def config(missing: str) -> dict:
    categories = ["cold", "flu"] + (["NA"] if missing == "category" else [])
    return {
        "method": "kronecker",
        "columns": [
            {
                "name": "diagnosis",
                "role": "perturb",
                "type": "nominal",
                "epsilon": 1.0,
                "categories": categories,
                "missing": missing,
                "missing_values": ["?", HIDDEN],
            },
            {"name": "smoker", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["no", "yes"]},
        ],
    }


@pytest.mark.parametrize("missing", ["exclude", "category"])
def test_the_codebook_names_a_generic_marker_and_only_counts_another_missing_value(tmp_path, missing):
    assert "?" in MISSING_MARKERS and HIDDEN not in MISSING_MARKERS
    out = tmp_path / "rel.csv"
    perturb_file(source(tmp_path), config(missing), out)
    manifest_text = (tmp_path / "rel.csv.manifest.json").read_text()
    book = {c["name"]: c for c in json.loads(manifest_text)["codebook"]}
    assert book["diagnosis"]["missing_values"] == ["?"]
    assert book["diagnosis"]["missing_values_other"] == 1
    assert "missing_values" not in book["smoker"] and "missing_values_other" not in book["smoker"]
    assert HIDDEN not in manifest_text
    assert HIDDEN not in (tmp_path / "rel.csv.report.html").read_text()
    assert HIDDEN not in out.read_text()
