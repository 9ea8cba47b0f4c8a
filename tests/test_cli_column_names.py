"""Column names with commas in ``optrr estimate --marginal`` and ``optrr analyze --chi2``: the whole value is one
column when it names one, a list quotes such names like a CSV record, and errors list the attributes quoted."""

import csv
import json

import numpy as np
import pytest

from optrr_engine.cli.main import main


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("optrr: error: ")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def release(tmp_path, capsys, developer) -> str:
    """schema + perturb of a CSV whose header is "Weight, kg",sex,"Site, code" (the last column kept)."""
    rng = np.random.default_rng(5)
    src = tmp_path / "data.csv"
    with open(src, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Weight, kg", "sex", "Site, code"])
        for _ in range(300):
            w.writerow([rng.choice(["low", "high"]), rng.choice(["m", "f"]), rng.choice(["A, 1", "B, 2"])])
    cfg_path = tmp_path / "release.json"
    assert main(["schema", str(src), "-o", str(cfg_path), "--quiet"]) == 0
    cfg = json.loads(cfg_path.read_text())
    assert [c["name"] for c in cfg["columns"]] == ["Weight, kg", "sex", "Site, code"]
    for c in cfg["columns"]:
        c["role"] = "keep" if c["name"] == "Site, code" else "perturb"
    cfg_path.write_text(json.dumps(cfg))
    rel = str(tmp_path / "rel.csv")
    args = ["perturb", str(src), "--config", str(cfg_path), "-o", rel, "--insecure-test-seed", "3", "--quiet"]
    assert main(args) == 0
    capsys.readouterr()
    return rel


def test_the_whole_value_is_one_column_when_it_names_one(release, capsys):
    assert main(["estimate", release, "--marginal", "Weight, kg", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attributes"] == ["Weight, kg"]
    assert main(["estimate", release, "--marginal", "Site, code"]) == 2  # a kept column, named as such
    assert "'Site, code' is a column copied unchanged" in error_line(capsys)


def test_a_name_with_a_comma_is_quoted_in_a_list(release, capsys):
    assert main(["estimate", release, "--marginal", '"Weight, kg",sex', "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attributes"] == ["Weight, kg", "sex"]
    assert main(["analyze", release, "--chi2", '"Weight, kg", sex', "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attributes"] == ["Weight, kg", "sex"]


def test_a_name_split_at_its_comma_says_how_to_quote_it(release, capsys):
    for option, cmd in (("--marginal", "estimate"), ("--chi2", "analyze")):
        assert main([cmd, release, option, "Weight, kg,sex"]) == 2
        line = error_line(capsys)
        assert "attribute 'Weight' is not in the release; perturbed attributes: 'Weight, kg', 'sex'" in line
        assert line.endswith(f"""double quotes, e.g. {option} '"Weight, kg",sex'""")


def test_an_unknown_name_lists_the_attributes_quoted_without_a_quoting_hint(release, capsys):
    assert main(["estimate", release, "--marginal", "height,sex"]) == 2
    line = error_line(capsys)
    assert line.endswith("attribute 'height' is not in the release; perturbed attributes: 'Weight, kg', 'sex'")


def test_the_help_gives_the_quoting_rule(capsys):
    for cmd, option in (("estimate", "--marginal"), ("analyze", "--chi2")):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert f"{option} " in out and "'\"Weight, kg\",sex'" in out


def test_printed_headers_quote_a_name_holding_a_comma(release, capsys):
    assert main(["estimate", release, "--marginal", '"Weight, kg",sex']) == 0
    assert 'attributes: "Weight, kg", sex   rows: 300' in capsys.readouterr().out
    assert main(["analyze", release, "--chi2", '"Weight, kg",sex']) == 0
    assert 'association of "Weight, kg" (2 categories) and sex (2 categories)' in capsys.readouterr().out


def test_estimate_and_analyze_read_the_manifest_once(release, capsys, monkeypatch):
    """The names are matched against the manifest that opens the release: it is read and validated once."""
    from optrr_engine.release import manifest as manifest_module

    validate, calls = manifest_module.validate_manifest, []
    monkeypatch.setattr(manifest_module, "validate_manifest", lambda *a, **k: calls.append(1) or validate(*a, **k))
    assert main(["estimate", release, "--marginal", '"Weight, kg",sex', "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attributes"] == ["Weight, kg", "sex"]
    assert len(calls) == 1
    assert main(["analyze", release, "--chi2", '"Weight, kg",sex', "--json"]) == 0
    assert len(calls) == 2, "analyze read the manifest twice"


ORDER_CASES = [("estimate", "--marginal", "sex"), ("analyze", "--chi2", '"Weight, kg",sex')]


@pytest.mark.parametrize("command, option, good", ORDER_CASES)
def test_a_wrong_name_comes_before_a_hash_mismatch_and_a_bad_manifest_before_both(release, capsys, command, option,
                                                                                  good):
    with open(release, "ab") as fh:
        fh.write(b'low,m,"A, 1"\n')
    assert main([command, release, option, "height,sex" if command == "analyze" else "height"]) == 2
    assert "attribute 'height' is not in the release" in error_line(capsys)
    assert main([command, release, option, good]) == 2
    assert "SHA-256 differs" in error_line(capsys)
    if command == "analyze":
        return
    manifest = release + ".manifest.json"
    with open(manifest, "w") as fh:
        fh.write("{")
    assert main(["estimate", release, "--marginal", "height"]) == 2
    assert "not valid JSON" in error_line(capsys)


def test_a_mistyped_name_is_said_without_hashing_the_release(release, capsys, monkeypatch):
    from optrr_engine.release import manifest as manifest_module

    hashed = []
    monkeypatch.setattr(manifest_module, "check_data_hash", lambda *a, **k: hashed.append(a))
    assert main(["estimate", release, "--marginal", "height"]) == 2
    assert "attribute 'height' is not in the release" in error_line(capsys) and hashed == []
    assert main(["estimate", release, "--marginal", "sex"]) == 0 and len(hashed) == 1


def test_a_name_missing_from_another_releases_manifest_says_the_manifest_does_not_match(release, capsys, tmp_path):
    """The manifest of another release (other columns) given with --manifest: a name it lacks is explained by the
    mismatch, not reported as a mistyped attribute (found from the release's header, without hashing it)."""
    import json

    other = tmp_path / "other.manifest.json"
    with open(release + ".manifest.json") as fh:
        manifest = json.load(fh)
    manifest["attributes"][0]["name"] = "Status"
    other.write_text(json.dumps(manifest))
    assert main(["estimate", release, "--manifest", str(other), "--marginal", "Weight, kg"]) == 2
    line = error_line(capsys)
    assert "manifest other.manifest.json does not describe" in line and "has no column 'Status'" in line
    assert "give the manifest written with this release" in line
