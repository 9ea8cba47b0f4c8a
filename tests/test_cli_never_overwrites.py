"""No command overwrites, even with --force, a file it must never replace: its own inputs and other outputs, the
audit record (the resolved audit folder's, or any file holding one, whatever its name) or a secret key (by its
content, whatever its name); ``optrr compare`` refuses an earlier run's files without --force; perturb warns about an
audit folder inside the release's folder; schema says when nothing can be released."""

import json
import os

import pytest

from optrr_engine.cli.main import main
from tests.conftest import TEST_DATA
from tests.test_release_cli import config_file, digest, good_columns, one_error_line

CAR = TEST_DATA / "car.csv"
NEVER = "never overwritten"


def key_named(path, capsys) -> str:
    """A key made by optrr keygen, under ``path`` (any name)."""
    assert main(["keygen", "-o", str(path)]) == 0
    capsys.readouterr()
    return str(path)


def audit_record_at(path) -> str:
    """A file holding an (empty) OptRR audit record at ``path``."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"format": "optrr-audit", "format_version": 1, "releases": []}, fh, indent=2)
    return str(path)


@pytest.fixture
def car_config(tmp_path, capsys) -> str:
    """A configuration of car.csv that optrr design accepts (its first two columns perturbed)."""
    from tests.test_release_design_step_messages import car_schema

    cfg = car_schema(tmp_path, capsys, ("buying", "maint"))
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def refused(capsys, argv, path, role: str) -> None:
    """``argv`` fails with one error line naming ``role``, with and without --force, and ``path`` is unchanged."""
    before = digest(path) if os.path.exists(path) else None
    for force in ([], ["--force"]):
        assert main([*argv, *force]) == 2
        line = one_error_line(capsys)
        assert role in line and NEVER in line, line
        assert (digest(path) if os.path.exists(path) else None) == before


def test_design_never_replaces_a_key_the_audit_record_or_its_prior(tmp_path, capsys, audit_dir, car_config):
    base = ["design", "--config", car_config, "--method", "kronecker", "-o"]
    key = key_named(tmp_path / "designed.json", capsys)
    refused(capsys, [*base, key], key, "secret key file")
    refused(capsys, [*base, str(audit_dir / "optrr-audit.json")], audit_dir / "optrr-audit.json", "audit record")
    elsewhere = audit_record_at(str(tmp_path / "old" / "optrr-audit.json"))
    refused(capsys, [*base, elsewhere], elsewhere, "audit record")
    backup = tmp_path / "copy-audit.json"  # a copy kept under another name (a second review replaced it)
    backup.write_text((tmp_path / "old" / "optrr-audit.json").read_text())
    refused(capsys, [*base, str(backup)], backup, "audit record")
    prior = tmp_path / "prior.json"
    prior.write_text(json.dumps({"1": [1, 1, 1, 1]}))
    refused(capsys, [*base, str(prior), "--prior", str(prior)], prior, "prior")
    # a file of that name holding something else is an ordinary output: replaced with --force
    other = tmp_path / "other" / "optrr-audit.json"
    other.parent.mkdir()
    other.write_text("{}\n")
    assert main([*base, str(other), "--force"]) == 0
    assert json.loads(other.read_text())["method"] == "kronecker"


def test_schema_never_replaces_its_dictionary_a_key_or_the_audit_record(tmp_path, capsys, audit_dir):
    data = tmp_path / "in.csv"
    data.write_text("a,b\n" + "x,p\ny,q\nx,r\n" * 20)
    book = tmp_path / "dict.csv"
    book.write_text("column,category\na,x\na,y\n")
    refused(capsys, ["schema", str(data), "--codebook", str(book), "-o", str(book)], book, "data dictionary")
    key = key_named(tmp_path / "config.json", capsys)
    refused(capsys, ["schema", str(data), "-o", key], key, "secret key file")
    record = audit_dir / "optrr-audit.json"
    refused(capsys, ["schema", str(data), "-o", str(record)], record, "audit record")
    assert not record.exists()  # the resolved record is refused before it exists, too
    elsewhere = audit_record_at(str(tmp_path / "old" / "optrr-audit.json"))
    refused(capsys, ["schema", str(data), "-o", elsewhere], elsewhere, "audit record")


def test_perturb_never_replaces_a_key_file_it_was_not_given(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("a,b\n" + "x,p\ny,q\nx,r\n" * 20)
    cfg = config_file(tmp_path, good_columns())
    key = key_named(tmp_path / "backup.csv", capsys)
    refused(capsys, ["perturb", str(src), "--config", cfg, "--quiet", "-o", key], key, "secret key file")
    assert not os.path.exists(key + ".manifest.json")


def test_keygen_never_writes_the_audit_record(audit_dir, capsys):
    record = audit_dir / "optrr-audit.json"
    assert main(["keygen", "-o", str(record)]) == 2
    line = one_error_line(capsys)
    assert "audit record" in line and NEVER in line and not record.exists()


def test_compare_refuses_an_earlier_runs_files_without_force(tmp_path, capsys):
    args = ["compare", "ratios", "--ks", "3", "--sets", "1", "--seed", "1", "--out", str(tmp_path), "--csv"]
    assert main(args) == 0
    capsys.readouterr()
    written = tmp_path / "ratios_fixed_sizes.csv"
    written.write_text("my notes\n")
    assert main(args) == 2
    line = one_error_line(capsys)
    assert str(written) in line and "--force" in line and "--out" in line
    assert written.read_text() == "my notes\n"
    assert main([*args, "--force"]) == 0
    assert written.read_text().startswith("mode,k,")
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # written through a temporary file


def test_compare_never_replaces_a_key_even_with_force(tmp_path, capsys):
    key = key_named(tmp_path / "ratios_fixed_sizes.csv", capsys)
    args = ["compare", "ratios", "--ks", "3", "--sets", "1", "--seed", "1", "--out", str(tmp_path), "--csv"]
    refused(capsys, args, key, "secret key file")


def test_perturb_warns_of_an_audit_folder_inside_the_releases_folder(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("a,b\n" + "x,p\ny,q\nx,r\n" * 50)
    cfg = config_file(tmp_path, good_columns())
    release = tmp_path / "rel"
    (release / "aud").mkdir(parents=True)
    argv = ["perturb", str(src), "--config", cfg, "-o", str(release / "x.csv"), "--quiet"]
    assert main([*argv, "--audit-dir", str(release / "aud")]) == 0
    err = capsys.readouterr().err
    assert "inside the release's folder" in err and "never send them" in err


def test_schema_of_one_row_says_nothing_can_be_released(tmp_path, capsys):
    src = tmp_path / "one.csv"
    src.write_text("a,b,c\n1,x,y\n")
    assert main(["schema", str(src), "-o", str(tmp_path / "one.json")]) == 0
    out, err = capsys.readouterr()
    assert "optrr design" not in out and "optrr perturb" not in out
    assert "nothing can be released from one.csv" in err and "1 data row" in err


def test_the_windows_release_never_overwrites_a_key_whatever_its_name(tmp_path):
    """The desktop window calls perturb_file itself: the same rule (a file holding a key is never replaced, even with
    force) holds there, not only on the command line."""
    from optrr_engine.errors import InputError
    from optrr_engine.release.perturb import perturb_file
    from optrr_engine.release.randomness import generate_key_file

    data = tmp_path / "in.csv"
    data.write_text("a,b\n" + "".join(f"{'xy'[i % 2]},{'uvw'[i % 3]}\n" for i in range(60)), encoding="utf-8")
    key = tmp_path / "backup.csv"
    generate_key_file(key)
    before = key.read_bytes()
    categories = {"a": ["x", "y"], "b": ["u", "v", "w"]}
    columns = [{"name": n, "role": "perturb", "epsilon": 1.0, "categories": c} for n, c in categories.items()]
    config = {"columns": columns, "method": "kronecker"}
    with pytest.raises(InputError, match="secret key file"):
        perturb_file(str(data), config, str(key), force=True)
    assert key.read_bytes() == before
