"""Three things ``perturb`` publishes or overwrites without being asked to, and what it does now:

- two runs to the same output at once: the names are checked free before the pass, and the final renames never
  replace a file without --force (:func:`optrr_engine.io.atomic.commit_new`), so a run finding an output written by
  another run meanwhile is refused, leaves none of its files under the final names, keeps the other run's files and
  records nothing in the audit record (:func:`optrr_engine.release.perturb.place_release`);
- a release in the input's record order (--no-shuffle): the manifest's notes, the report and stderr warn that a file
  sorted or grouped by a released column discloses its values through row positions, naming the columns whose values
  come in long runs (:class:`optrr_engine.release.perturb.RowOrder`; named to the hospital only);
- a kept column (copied in the clear) with a value of fewer than RARE_COUNT rows is refused as a perturbed column's
  rare category is, unless approved (--allow-flagged-kept or the column's name): :meth:`KeptUniqueGuard.rare`."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pyarrow as pa
import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.io.atomic import AtomicFile, commit_new
from optrr_engine.release import audit as audit_module
from optrr_engine.release.audit import AUDIT_NAME
from optrr_engine.release.perturb import (
    ORDER_SAMPLE_ROWS,
    KeptUniqueGuard,
    PublishRefusal,
    RowOrder,
    perturb_file,
)
from optrr_engine.release.schema import RARE_COUNT
from tests.test_perturb_rare_and_unique_kept import error_line, write_csv

OUTPUTS = ("rel.csv", "rel.csv.manifest.json", "rel.csv.report.html")
EARLIER = "the earlier run's release\n"


def config(kept: tuple[str, ...] = (), recodes: dict | None = None) -> dict:
    """outcome (perturbed, yes/no), smoker (perturbed, yes/no) and the ``kept`` columns."""
    recodes = recodes or {}
    columns = [
        {"name": n, "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["no", "yes"]}
        for n in ("outcome", "smoker")
    ]
    columns += [{"name": n, "role": "keep", **({"recode": recodes[n]} if n in recodes else {})} for n in kept]
    return {"method": "kronecker", "columns": columns}


def rows(n: int = 400, cases: int = 40, sorted_cases: bool = False, site=None, gender=None, seed=7) -> list[str]:
    """outcome,smoker,site,gender: ``cases`` rows of outcome 'yes' (the first ones when ``sorted_cases``, else spread
    at random), smoker at random; ``site(i)`` (default: at random of 4) and ``gender(i)`` (default F/M alternating)."""
    rng = np.random.default_rng(seed)
    outcome = np.array(["yes"] * cases + ["no"] * (n - cases))
    if not sorted_cases:
        outcome = rng.permutation(outcome)
    smoker = rng.choice(["yes", "no"], n)
    sites = rng.choice(["north", "south", "east", "west"], n)
    site = site or (lambda i: sites[i])
    gender = gender or (lambda i: "FM"[i % 2])
    return [f"{outcome[i]},{smoker[i]},{site(i)},{gender(i)}" for i in range(n)]


def source(tmp_path, data=None, name: str = "in.csv") -> str:
    return write_csv(tmp_path, name, "outcome,smoker,site,gender", rows() if data is None else data)


def audit_releases(audit_dir) -> list[dict]:
    path = os.path.join(audit_dir, AUDIT_NAME)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["releases"]


def write_earlier(tmp_path, names=OUTPUTS) -> dict[str, str]:
    """Files of another run under ``names`` (in tmp_path): {name: text}."""
    texts = {name: f"{EARLIER}{name}" for name in names}
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    return texts


def hidden(folder) -> list[str]:
    return [n for n in os.listdir(folder) if n.startswith(".")]


# 1. two runs to the same output at once


def test_an_output_written_by_another_run_during_the_pass_refuses_the_release(tmp_path, audit_dir):
    src = source(tmp_path)
    texts: dict[str, str] = {}
    with pytest.raises(InputError) as refused:
        perturb_file(src, config(), tmp_path / "rel.csv", at_commit=lambda: texts.update(write_earlier(tmp_path)))
    message = str(refused.value)
    assert "rel.csv" in message and "written by another run" in message and "--force" in message
    assert "nothing was released" in message
    for name, text in texts.items():
        assert (tmp_path / name).read_text() == text, name  # the earlier run's files untouched
    assert hidden(tmp_path) == [] and audit_releases(audit_dir) == []  # no temporary left, nothing recorded
    assert [n for n in os.listdir(audit_dir) if n.endswith(".internal-report.html")] == []


def test_one_name_taken_meanwhile_leaves_none_of_this_run_under_the_other_names(tmp_path, audit_dir):
    src = source(tmp_path)
    with pytest.raises(InputError, match="manifest .*written by another run"):
        perturb_file(src, config(), tmp_path / "rel.csv", at_commit=lambda: write_earlier(tmp_path, OUTPUTS[1:2]))
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "rel.csv.manifest.json"]
    assert audit_releases(audit_dir) == []


def test_a_name_taken_between_the_audit_entry_and_the_renames_takes_this_entry_out_again(
    tmp_path, audit_dir, monkeypatch
):
    """The race the check at the commit point cannot see: the other run writes the name after this run recorded its
    release. The renames before it (internal report, manifest, report) are undone, the entry taken out, and the entry
    of an earlier release in the same audit record stays."""
    other = source(tmp_path, rows(cases=60, seed=8), name="other.csv")
    perturb_file(other, config(), tmp_path / "first.csv")
    earlier = audit_releases(audit_dir)
    assert len(earlier) == 1
    append = audit_module.append_release

    def append_then_the_other_run_writes(*args, **kwargs):
        history = append(*args, **kwargs)
        assert len(audit_releases(audit_dir)) == 2  # recorded: now the other run finishes
        write_earlier(tmp_path, OUTPUTS[:1])
        return history

    monkeypatch.setattr(audit_module, "append_release", append_then_the_other_run_writes)
    src = source(tmp_path)
    with pytest.raises(InputError, match="output .*rel.csv was written by another run"):
        perturb_file(src, config(), tmp_path / "rel.csv")
    assert (tmp_path / "rel.csv").read_text() == f"{EARLIER}rel.csv"
    assert not (tmp_path / OUTPUTS[1]).exists() and not (tmp_path / OUTPUTS[2]).exists()
    assert hidden(tmp_path) == [] and audit_releases(audit_dir) == earlier
    reports = [n for n in os.listdir(audit_dir) if n.endswith(".internal-report.html")]
    assert len(reports) == 1 and reports[0].startswith("first.csv")


def test_with_force_an_output_written_meanwhile_is_replaced(tmp_path, audit_dir):
    src = source(tmp_path)
    made = perturb_file(src, config(), tmp_path / "rel.csv", force=True, at_commit=lambda: write_earlier(tmp_path))
    assert not (tmp_path / "rel.csv").read_text().startswith(EARLIER)
    assert json.loads((tmp_path / OUTPUTS[1]).read_text())["output_sha256"] == made.manifest["output_sha256"]
    assert len(audit_releases(audit_dir)) == 1


def test_the_command_line_refuses_an_output_another_run_wrote_meanwhile(tmp_path, audit_dir, capsys, monkeypatch):
    """``optrr perturb big.csv -o race.csv &`` and a quicker run to the same name: the later commit is refused."""
    from optrr_engine.cli import interrupts

    src = source(tmp_path)
    cfg = tmp_path / "release.json"
    cfg.write_text(json.dumps(config()))
    monkeypatch.setattr(interrupts, "hold", lambda: write_earlier(tmp_path, OUTPUTS[:1]))
    assert main(["perturb", src, "--config", str(cfg), "-o", str(tmp_path / "rel.csv"), "--quiet"]) == 2
    assert "written by another run" in error_line(capsys)
    assert (tmp_path / "rel.csv").read_text() == f"{EARLIER}rel.csv"
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "rel.csv", "release.json"] and audit_releases(audit_dir) == []


def test_commit_new_never_replaces_a_file(tmp_path):
    final = tmp_path / "out.txt"
    tmp = AtomicFile(final)
    with open(tmp.path, "w") as fh:
        fh.write("new")
    final.write_text("there first")
    with pytest.raises(FileExistsError):
        commit_new(tmp)
    assert final.read_text() == "there first" and os.path.exists(tmp.path) and not tmp.committed
    os.unlink(final)
    commit_new(tmp)
    assert final.read_text() == "new" and not os.path.exists(tmp.path) and tmp.committed
    tmp.discard()
    assert final.read_text() == "new"


# 2. --no-shuffle: the record order kept


def order_note(manifest: dict) -> str:
    notes = [n for n in manifest["design"]["notes"] if "row order" in n]
    assert len(notes) == 1, manifest["design"]["notes"]
    return notes[0]


def test_a_column_the_file_is_sorted_by_is_named_to_the_hospital_not_the_recipient(tmp_path, capsys, audit_dir):
    """The note the recipient gets (manifest, report) warns of the kept order without naming a column: which column
    the raw file is sorted by is data-derived and would tell an attacker how to read the positions. The hospital
    is told (stderr, the audit record, the internal report)."""
    src = source(tmp_path, rows(sorted_cases=True))
    cfg = tmp_path / "release.json"
    cfg.write_text(json.dumps(config(kept=("site",))))
    assert main(["perturb", src, "--config", str(cfg), "-o", str(tmp_path / "rel.csv"), "--no-shuffle", "--quiet"]) == 0
    err = capsys.readouterr().err
    manifest = json.loads((tmp_path / OUTPUTS[1]).read_text())
    note = order_note(manifest)
    assert note.startswith("WARNING") and "sorted or grouped" in note and "row's position discloses" in note
    assert "outcome" not in note and "outcome" not in json.dumps(manifest["design"]["notes"])
    assert "come in long runs" not in (tmp_path / OUTPUTS[2]).read_text()
    assert note in err and "the values of 'outcome' come in long runs" in err and "'smoker'" not in err
    assert audit_releases(audit_dir)[0]["order_in_runs"] == ["outcome"]
    internal = next(n for n in os.listdir(audit_dir) if n.endswith(".internal-report.html"))
    assert "the values of &#x27;outcome&#x27; come in long runs" in (audit_dir / internal).read_text()


def test_a_file_grouped_by_a_kept_column_names_it_to_the_hospital(tmp_path):
    src = source(tmp_path, rows(site=lambda i: ["north", "south", "east", "west"][i // 100]))
    made = perturb_file(src, config(kept=("site", "gender")), tmp_path / "rel.csv", shuffle=False)
    assert made.audit_entry["order_in_runs"] == ["site"]  # not 'outcome' (at random) nor 'gender' (alternating)
    assert "site" not in order_note(made.manifest)


def test_the_order_kept_is_warned_of_even_when_no_column_is_in_runs(tmp_path):
    made = perturb_file(source(tmp_path), config(kept=("site",)), tmp_path / "rel.csv", shuffle=False)
    note = order_note(made.manifest)
    assert "sorted or grouped by a released column" in note and made.audit_entry["order_in_runs"] == []


def test_a_shuffled_release_has_no_order_note(tmp_path):
    made = perturb_file(source(tmp_path, rows(sorted_cases=True)), config(), tmp_path / "rel.csv")
    assert not [n for n in made.manifest["design"]["notes"] if "row order" in n]


def test_row_order_flags_sorted_columns_and_not_shuffled_ones_also_from_a_sample():
    """Sorted or grouped columns are named, random orders of the same values never are, also when the rows
    outnumber the sample (the shuffled order's agreement estimated from it)."""
    rng = np.random.default_rng(3)
    n = 30_000
    sorted_codes = np.repeat([0, 1, 2], [n - 300, 200, 100])  # a rare outcome grouped at the end
    grouped = np.repeat(np.arange(30), n // 30)
    for sample_rows in (ORDER_SAMPLE_ROWS, 5000):
        order = RowOrder(["sorted", "grouped", "random"], sample_rows=sample_rows)
        random = rng.permutation(sorted_codes)
        for start in range(0, n, 4096):  # chunks: runs across their borders count
            stop = start + 4096
            order.add(np.column_stack([sorted_codes[start:stop], grouped[start:stop], random[start:stop]]))
        assert order.rows == n and len(order.sample) == min(n, sample_rows)
        assert order.in_runs() == ["sorted", "grouped"]
    for seed in range(20):  # chance alone never names a column, in a small file either
        small = np.random.default_rng(seed).integers(0, 2, size=(40, 3))
        order = RowOrder(["a", "b", "c"])
        order.add(small)
        assert order.in_runs() == []


# 3. a kept column's rare values


def gender_rows(other: int = 1, empty: int = 0) -> list[str]:
    """rows() whose gender is 'Other' in ``other`` rows and empty in ``empty`` rows."""
    return rows(gender=lambda i: "Other" if i < other else "" if i < other + empty else "FM"[i % 2])


def test_a_kept_value_of_one_row_is_refused_naming_the_column_and_the_ways_out(tmp_path, audit_dir):
    src = source(tmp_path, gender_rows(other=1))
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(src, config(kept=("gender",)), tmp_path / "rel.csv")
    message = str(refused.value)
    assert f"kept column(s) 'gender' (1 value held by fewer than {RARE_COUNT} rows, 1 row in all)" in message
    assert "in the clear" in message and "recode" in message and "bands" in message and "drop it" in message
    assert "--allow-flagged-kept" in message
    assert refused.value.kept_rare == [("gender", 1, 1)]  # its own field: 1 value, held by 1 row
    assert refused.value.kept == [] and refused.value.rare == []
    assert pickle.loads(pickle.dumps(refused.value)).kept_rare == [("gender", 1, 1)]  # through the GUI's workers
    assert os.listdir(tmp_path) == ["in.csv"] and audit_releases(audit_dir) == []
    made = perturb_file(src, config(kept=("gender",)), tmp_path / "rel.csv", allow_flagged_kept={"gender"})
    assert made.manifest["kept_columns"] == ["gender"]


def test_kept_values_of_rare_count_rows_empty_cells_and_values_recoded_away_are_not_refused(tmp_path):
    src = source(tmp_path, gender_rows(other=RARE_COUNT, empty=2))
    perturb_file(src, config(kept=("gender",)), tmp_path / "rel.csv")
    src = source(tmp_path, gender_rows(other=2), name="in2.csv")
    with pytest.raises(PublishRefusal, match=r"'gender' \(1 value held by fewer than 5 rows, 2 rows in all\)"):
        perturb_file(src, config(kept=("gender",)), tmp_path / "rel2.csv")
    merged = config(kept=("gender",), recodes={"gender": {"F": ["F", "Other"]}})
    perturb_file(src, merged, tmp_path / "rel2.csv", allow_repeat=True)


def test_the_command_line_refuses_a_rare_kept_value_unless_allow_flagged_kept(tmp_path, capsys):
    src = source(tmp_path, gender_rows(other=3))
    cfg = tmp_path / "release.json"
    cfg.write_text(json.dumps(config(kept=("gender",))))
    argv = ["perturb", src, "--config", str(cfg), "-o", str(tmp_path / "rel.csv"), "--quiet"]
    assert main([*argv, "--allow-rare-categories"]) == 2  # a kept value is not a perturbed column's category
    line = error_line(capsys)
    assert "'gender' (1 value held by fewer than 5 rows, 3 rows in all)" in line and "--allow-flagged-kept" in line
    assert main([*argv, "--allow-flagged-kept"]) == 0
    assert all((tmp_path / name).exists() for name in OUTPUTS)


def test_a_too_unique_kept_column_is_refused_once_by_the_unique_rule(tmp_path):
    src = source(tmp_path, rows(gender=lambda i: f"p{i}"))
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(src, config(kept=("gender",)), tmp_path / "rel.csv")
    assert "value no other row has" in str(refused.value) and "fewer than" not in str(refused.value)
    assert refused.value.kept == [("gender", 400, 400)] and refused.value.kept_rare == []


def test_the_guard_counts_rare_kept_values_past_its_exact_cap_by_hash():
    guard = KeptUniqueGuard(["g"], cap=2)
    for chunk in (["a", "b", "c", "a"], ["c", "d", "a", "a", "b"], [None, "e"] + ["f"] * RARE_COUNT):
        guard.add(pa.table({"g": pa.array(chunk, type=pa.string())}))
    assert guard.rare() == [("g", 5, 2 + 2 + 4 + 1 + 1)]  # b, c, d, e and a (4 rows); not f, not the empty cell
    assert guard.counts["g"].hashed is not None  # counted by 64-bit key
