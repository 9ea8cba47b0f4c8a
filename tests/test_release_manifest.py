"""Manifests: keys, validation of version / keys / epsilons / hash, and rebuilding the mechanism exactly."""

import json

import numpy as np
import pytest

from optrr_engine.errors import InputError
from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.release.manifest import REQUIRED_KEYS, load_manifest, mechanism_from_manifest
from optrr_engine.release.perturb import perturb_file


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rel")
    rng = np.random.default_rng(0)
    lines = ["sex,smoker,region"] + [
        f"{rng.choice(['F', 'M'])},{rng.choice(['no', 'yes'])},{rng.choice(['N', 'S', 'E'])}" for _ in range(400)
    ]
    (folder / "in.csv").write_text("\n".join(lines) + "\n")
    cats = {"sex": ["F", "M"], "smoker": ["no", "yes"], "region": ["E", "N", "S"]}
    cfg = ReleaseConfig(
        method="optimal",
        columns=[
            ColumnConfig(name=n, role="perturb", epsilon=1.0 + i, categories=c) for i, (n, c) in enumerate(cats.items())
        ],
    )
    with pytest.MonkeyPatch.context() as mp:  # the test seed needs developer mode (module fixture: no monkeypatch)
        mp.setenv("OPTRR_DEVELOPER", "1")
        made = perturb_file(folder / "in.csv", cfg, folder / "out.csv", insecure_test_seed=2, audit_dir=folder)
    return folder, made.manifest


def test_manifest_has_the_documented_keys(release):
    folder, m = release
    assert all(k in m for k in REQUIRED_KEYS) and m["format_version"] == 3
    assert [a["name"] for a in m["attributes"]] == ["sex", "smoker", "region"]
    assert m["attributes"][2]["categories"] == ["E", "N", "S"]
    assert [a["requested_epsilon"] for a in m["attributes"]] == [1.0, 2.0, 3.0]
    np.testing.assert_allclose([a["achieved_epsilon"] for a in m["attributes"]], [1.0, 2.0, 3.0], rtol=1e-9)
    assert m["mechanism"]["method"] == "optimal" and m["rows"] == 400
    for key in ("tool", "created", "output", "codebook", "design", "columns", "randomness"):
        assert key in m
    assert m["output"]["file"] == "out.csv"
    for key in ("input", "input_sha256", "rows_read", "rows_excluded", "dropped_columns", "chunk_rows", "seeded"):
        assert key not in m  # the raw file is described only in the hospital's audit record
    text = (folder / "out.csv.manifest.json").read_text()
    assert "NaN" not in text and "Infinity" not in text  # strict JSON


def test_mechanism_is_rebuilt_exactly(release):
    folder, m = release
    mech = mechanism_from_manifest(load_manifest(folder / "out.csv.manifest.json"))
    again = dict(m["mechanism"])
    again.pop("method")
    assert mech.to_dict() == again
    assert mech.overall_epsilon() == pytest.approx(m["overall_epsilon"], rel=1e-12)


def write_variant(folder, manifest, name, edit):
    data = json.loads(json.dumps(manifest))
    edit(data)
    path = folder / name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("edit", "pattern"),
    [
        (lambda d: d.pop("output_sha256"), "lacks the key 'output_sha256'"),
        (lambda d: d.update(format_version=4), "format_version 4, newer than this OptRR reads"),
        (lambda d: d.update(format_version=1), "lacks the key 'input_sha256'"),
        (lambda d: d.update(format_version="1"), "invalid format_version"),
        (lambda d: d["attributes"][0].update(achieved_epsilon=0.5), "states epsilon 0.5 for 'sex'"),
        (lambda d: d.update(overall_epsilon=1.0), r"states overall_epsilon 1.0 but its mechanism gives \d"),
        (lambda d: d["attributes"][2]["categories"].pop(), "category counts differ"),
        (lambda d: d["mechanism"]["blocks"][0].update(kind="mystery"), "invalid mechanism"),
        (lambda d: d["mechanism"].pop("blocks"), "invalid mechanism"),
        (lambda d: d.update(rows=-3), "invalid row count"),
        (lambda d: d.update(output_sha256="abc"), "invalid output_sha256"),
        (lambda d: d.update(randomness="os"), "invalid 'randomness'"),
        (lambda d: d.update(format_version=1, input_sha256="0" * 64, seeded="no"), "non-boolean 'seeded'"),
        (lambda d: d.update(attributes=[]), "has no attributes"),
        (lambda d: d["attributes"][0].update(categories=["F", "F"]), "categories of attribute 'sex' that are not"),
        (lambda d: d["attributes"][1].update(name=d["attributes"][0]["name"]), "attributes with texts that are not"),
    ],
)
def test_damaged_manifests_are_refused(release, edit, pattern):
    folder, m = release
    path = write_variant(folder, m, "bad.manifest.json", edit)
    with pytest.raises(InputError, match=pattern) as info:
        load_manifest(path, data_path=folder / "out.csv")
    assert "\n" not in str(info.value)


def test_a_manifest_nested_too_deeply_is_a_one_line_error(release, tmp_path):
    deep = tmp_path / "deep.manifest.json"
    deep.write_text('{"notes": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(InputError, match="nested too deeply to be read; it is damaged"):
        load_manifest(deep)


def test_corrupt_json_missing_data_and_mismatched_data(release, tmp_path):
    folder, m = release
    text = (folder / "out.csv.manifest.json").read_text()
    cut = tmp_path / "cut.manifest.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(InputError, match="is not valid JSON .*damaged"):
        load_manifest(cut)
    with pytest.raises(InputError, match="does not exist"):
        load_manifest(tmp_path / "none.manifest.json")
    alone = tmp_path / "out.csv.manifest.json"
    alone.write_text(text)
    with pytest.raises(InputError, match="data file .*out.csv described by manifest .* does not exist"):
        load_manifest(alone)
    changed = tmp_path / "out.csv"
    changed.write_bytes((folder / "out.csv").read_bytes().replace(b"\nyes,F,", b"\nyes,M,", 1))  # after the marker
    with pytest.raises(InputError, match="does not match manifest .*SHA-256 differs"):
        load_manifest(alone)
    assert load_manifest(alone, check_hash=False)["rows"] == 400
    other = tmp_path / "other.csv"
    other.write_bytes((folder / "out.csv").read_bytes())
    assert load_manifest(alone, data_path=other)["rows"] == 400


def test_minimal_manifest_of_the_documented_interface_loads(release, tmp_path):
    """A manifest holding only the stable keys (as other tools may write) is accepted."""
    folder, m = release
    minimal = {k: m[k] for k in REQUIRED_KEYS}
    minimal["attributes"] = [
        {k: a[k] for k in ("name", "categories", "requested_epsilon", "achieved_epsilon")} for a in m["attributes"]
    ]
    minimal["mechanism"] = {k: v for k, v in m["mechanism"].items() if k != "method"}
    path = tmp_path / "min.manifest.json"
    path.write_text(json.dumps(minimal))
    assert load_manifest(path, data_path=folder / "out.csv")["rows"] == 400


def test_the_mechanism_is_written_on_one_line_and_the_rest_indented():
    """A large design's pattern tables, one number per line, made a census manifest 40 MB instead of 10 MB."""
    import json

    from optrr_engine.designs import run_design
    from optrr_engine.release.manifest import manifest_text

    mech = run_design("optimal", [3, 4, 2], [1.0, 0.5, 2.0]).mechanism.to_dict()
    manifest = {"format_version": 1, "attributes": [{"name": "a"}], "mechanism": mech, "rows": 10}
    text = manifest_text(manifest)
    assert json.loads(text) == json.loads(json.dumps(manifest))
    lines = text.splitlines()
    (line,) = [x for x in lines if x.lstrip().startswith('"mechanism"')]
    assert json.loads(line.split(":", 1)[1].rstrip(",")) == mech
    assert '  "attributes": [' in lines and len(text) < len(json.dumps(manifest, indent=2))


def test_the_audit_record_writes_each_configurations_mechanism_on_one_line():
    """A GUI-designed configuration carries its mechanism into the audit record (56.7 MB for one census release,
    rewritten whole at every later release); a text of the data that holds the placeholder itself falls back to
    the fully indented form, never to a wrong file."""
    import json

    from optrr_engine.designs import run_design
    from optrr_engine.release.audit import audit_text
    from optrr_engine.release.manifest import indented_json

    mech = run_design("optimal", [3, 4, 2], [1.0, 0.5, 2.0]).mechanism.to_dict()
    audit = {"format": "optrr-audit", "releases": [{"configuration": {"mechanism": mech, "columns": [1, 2]}}] * 2}
    text = audit_text(audit)
    assert json.loads(text) == json.loads(json.dumps(audit))
    assert sum('"mechanism": {' in line for line in text.splitlines()) == 2
    assert len(text.splitlines()) < 40  # everything else still indented, one value per line
    tricky = {"note": "\u0000mechanism 0\u0000", "mechanism": mech}
    assert json.loads(indented_json(tricky)) == json.loads(json.dumps(tricky))
