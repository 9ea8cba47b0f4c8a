"""The hospital's audit record: parallel runs never lose an entry (file lock), its default folder is a per-user
data folder (never one that might be sent), and the ledger works across configuration folders."""

import json
import multiprocessing
import os
import sys

import pytest

from optrr_engine.release.audit import AUDIT_NAME, append_release, audit_folder, load_audit

PROCESSES = 8
ENTRIES_EACH = 5


def _append_entries(path: str, worker: int, start) -> None:
    """Child process: wait for the common start, then append ENTRIES_EACH entries, one lock hold each."""
    start.wait(60)
    for i in range(ENTRIES_EACH):
        append_release(path, {"input": {"sha256": f"w{worker}"}, "overall_epsilon": 1.0, "tag": f"{worker}-{i}"})


def test_parallel_processes_never_lose_an_audit_entry(tmp_path):
    path = str(tmp_path / AUDIT_NAME)
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_append_entries, args=(path, w, start)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    start.set()  # all at once, so that their read-modify-writes overlap
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0] * PROCESSES
    with open(path, encoding="utf-8") as fh:
        audit = json.load(fh)  # valid JSON
    tags = sorted(r["tag"] for r in audit["releases"])
    assert tags == sorted(f"{w}-{i}" for w in range(PROCESSES) for i in range(ENTRIES_EACH))
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".optrr-tmp")]  # written through the atomic writer


def test_a_repeat_recorded_meanwhile_is_refused_under_the_lock(tmp_path):
    from optrr_engine.release.audit import RepeatReleaseError

    path = tmp_path / AUDIT_NAME
    first = {"input": {"sha256": "abc"}, "overall_epsilon": 1.5}
    assert append_release(path, first, allow_repeat=False) == [first]
    with pytest.raises(RepeatReleaseError, match="released 1 time") as caught:
        append_release(path, {"input": {"sha256": "abc"}, "overall_epsilon": 2.0}, allow_repeat=False)
    assert caught.value.accumulated == pytest.approx(3.5)
    assert load_audit(path)["releases"] == [first]  # nothing written


def test_default_audit_folder_is_the_per_user_data_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("OPTRR_AUDIT_DIR")
    if sys.platform.startswith("linux"):  # XDG: $XDG_DATA_HOME/<app>
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        expected = tmp_path / "data" / "OptRR" / "audit"
    else:
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
        from platformdirs import user_data_dir

        expected = os.path.join(user_data_dir("OptRR", appauthor=False), "audit")
    folder = audit_folder()
    assert folder == os.path.abspath(expected) and os.path.isdir(folder)
    assert str(tmp_path) in folder  # never the real home in a test
    if os.name == "posix":
        assert os.stat(folder).st_mode & 0o077 == 0  # the hospital's record: readable by its user only


def test_environment_and_option_override_the_default(monkeypatch, tmp_path, audit_dir):
    assert audit_folder() == str(audit_dir)  # tests/conftest.py sets OPTRR_AUDIT_DIR
    assert audit_folder(tmp_path) == str(tmp_path)  # --audit-dir wins
    monkeypatch.setenv("OPTRR_AUDIT_DIR", str(tmp_path / "missing"))
    from optrr_engine.errors import InputError

    with pytest.raises(InputError, match="missing .from OPTRR_AUDIT_DIR. does not exist"):
        audit_folder()


def _release_args(folder, src) -> list[str]:
    cfg = folder / "release.json"
    cats = {"a": ["x", "y"], "b": ["p", "q", "r"]}
    cols = [{"name": n, "role": "perturb", "epsilon": 1.0, "categories": c} for n, c in cats.items()]
    cfg.write_text(json.dumps({"method": "kronecker", "columns": cols}))
    return ["perturb", str(src), "--config", str(cfg), "-o", str(folder / "out.csv"), "--quiet"]


def test_the_ledger_works_across_configuration_folders(tmp_path, capsys, audit_dir):
    from optrr_engine.cli.main import main

    src = tmp_path / "in.csv"
    src.write_text("a,b\n" + "x,p\ny,q\nx,r\n" * 20)
    one, two = tmp_path / "project1", tmp_path / "project2"
    one.mkdir()
    two.mkdir()
    assert main(_release_args(one, src)) == 0
    assert sorted(os.listdir(one)) == ["out.csv", "out.csv.manifest.json", "out.csv.report.html", "release.json"]
    capsys.readouterr()
    assert main(_release_args(two, src)) == 2  # another configuration folder, the same data: refused
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "released 1 time(s) before" in err and "--allow-repeat" in err
    assert sorted(os.listdir(two)) == ["release.json"]
    assert main([*_release_args(two, src), "--allow-repeat"]) == 0
    releases = load_audit(audit_dir / AUDIT_NAME)["releases"]
    assert [os.path.dirname(r["files"]["release"]) for r in releases] == [str(one), str(two)]
    reports = [r["files"]["internal_report"] for r in releases]
    assert len(set(reports)) == 2 and all(os.path.dirname(p) == str(audit_dir) and os.path.exists(p) for p in reports)


def test_perturb_file_returns_the_entry_and_ledger_it_recorded(tmp_path, audit_dir):
    """The caller (optrr perturb, the release dialog) gets the audit entry and ledger without reading the record
    again: they equal what the record holds (JSON round trip), and another source's releases are not in the ledger."""
    from optrr_engine.release.audit import release_entry, releases_of
    from optrr_engine.release.perturb import perturb_file

    src, other = tmp_path / "in.csv", tmp_path / "other.csv"
    src.write_text("a,b\n" + "x,p\ny,q\nx,r\n" * 20)
    other.write_text("a,b\n" + "y,p\nx,q\n" * 20)
    cfg = {"method": "kronecker", "columns": [
        {"name": "a", "role": "perturb", "epsilon": 1.0, "categories": ["x", "y"]},
        {"name": "b", "role": "perturb", "epsilon": 1.0, "categories": ["p", "q", "r"]},
    ]}
    perturb_file(src, cfg, tmp_path / "r1.csv")
    perturb_file(other, cfg, tmp_path / "o1.csv")
    made = perturb_file(src, cfg, tmp_path / "r2.csv", allow_repeat=True)
    record = load_audit(audit_dir / AUDIT_NAME)
    assert made.audit_entry == release_entry(record, made.manifest["output_sha256"])
    assert made.audit_entry["output_sha256"] == made.manifest["output_sha256"]
    assert made.ledger == releases_of(record, made.audit_entry["input"]["sha256"])
    assert [os.path.basename(r["files"]["release"]) for r in made.ledger] == ["r1.csv", "r2.csv"]


def test_the_internal_files_are_readable_by_their_owner_only(tmp_path, audit_dir):
    """The audit record and the internal report name the raw file, its hash and the key fingerprint: 0600 even in
    a shared (0755) audit folder; the files sent with the release keep the umask's permissions."""
    import stat

    from optrr_engine.release.perturb import perturb_file

    os.chmod(audit_dir, 0o755)
    src = tmp_path / "in.csv"
    src.write_text("a,b\n" + "x,p\ny,q\nx,r\n" * 20)
    cfg = {"method": "kronecker", "columns": [
        {"name": "a", "role": "perturb", "epsilon": 1.0, "categories": ["x", "y"]},
        {"name": "b", "role": "perturb", "epsilon": 1.0, "categories": ["p", "q", "r"]},
    ]}
    made = perturb_file(src, cfg, tmp_path / "r1.csv")

    def mode(path) -> int:
        return stat.S_IMODE(os.stat(path).st_mode)

    assert mode(audit_dir / AUDIT_NAME) == 0o600
    assert mode(made.audit_entry["files"]["internal_report"]) == 0o600
    mask = os.umask(0)
    os.umask(mask)
    for sent in ("r1.csv", "r1.csv.manifest.json", "r1.csv.report.html"):
        assert mode(tmp_path / sent) == 0o666 & ~mask, sent


def test_a_weekly_release_to_the_same_name_keeps_one_internal_report_each(tmp_path, audit_dir, monkeypatch):
    """Last week's release moved away, this week's goes to the same name: it is not refused by last week's internal
    report (it was, for good: the GUI cannot pass --force), and each release keeps its own report."""
    import optrr_engine.release.manifest as manifest_module
    from optrr_engine.release.perturb import perturb_file

    src = tmp_path / "in.csv"
    src.write_text("a,b\n" + "x,p\ny,q\nx,r\n" * 20)
    cfg = {"method": "kronecker", "columns": [
        {"name": "a", "role": "perturb", "epsilon": 1.0, "categories": ["x", "y"]},
        {"name": "b", "role": "perturb", "epsilon": 1.0, "categories": ["p", "q", "r"]},
    ]}
    reports = []
    for week in ("2026-11-19T09:00:00Z", "2026-11-26T09:00:00Z"):
        monkeypatch.setattr(manifest_module, "utc_now", lambda week=week: week)
        made = perturb_file(src, cfg, tmp_path / "weekly.csv", allow_repeat=True)
        reports.append(made.audit_entry["files"]["internal_report"])
        for suffix in ("", ".manifest.json", ".report.html"):  # archived elsewhere
            os.rename(f"{tmp_path / 'weekly.csv'}{suffix}", f"{tmp_path / week[:10]}{suffix}")
    assert len(set(reports)) == 2 and all(os.path.exists(r) for r in reports)
    assert [os.path.basename(r).split(".")[3] for r in reports] == ["20261119T090000Z", "20261126T090000Z"]
