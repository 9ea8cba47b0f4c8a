"""packaging/icu_data_filter.py: the filtered ICU data library keeps its format, SONAME and symbol, and Qt works.

The last test loads Qt in subprocesses, once with PySide6's original libicudata and once with the filtered copy
preloaded (LD_PRELOAD, same SONAME), and compares what Qt computes with ICU.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGING = Path(__file__).resolve().parents[1] / "packaging"
sys.path.insert(0, str(PACKAGING))
import icu_data_filter as icu  # noqa: E402


def _pyside_icudata() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations)), "Qt", "lib").glob("libicudata.so.*"))
    return found[0] if found else None


ICUDATA = _pyside_icudata() if sys.platform.startswith("linux") else None
HAVE_TOOLS = all(shutil.which(t) for t in ("as", "ld", "nm", "readelf"))
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF shared libraries: Linux only"),
    pytest.mark.skipif(ICUDATA is None, reason="PySide6's libicudata.so.* is not installed"),
    pytest.mark.skipif(not HAVE_TOOLS, reason="binutils (as, ld, nm, readelf) are not installed"),
]


@pytest.fixture(scope="module")
def filtered(tmp_path_factory):
    dest = tmp_path_factory.mktemp("icu") / ICUDATA.name
    report = icu.filter_icu_library(ICUDATA, dest)
    return dest, report


@pytest.fixture(scope="module")
def original_package():
    return icu.parse_package(icu.read_icu_library(ICUDATA).data)


def test_rebuilding_with_every_item_reproduces_the_original_package_exactly(original_package):
    library = icu.read_icu_library(ICUDATA)
    rebuilt = icu.build_package(original_package.header, original_package.items, original_package.endian)
    assert rebuilt == library.data


def test_round_trip_keeps_chosen_items_byte_identical_sorted_and_aligned(filtered, original_package):
    dest, report = filtered
    new = icu.parse_package(icu.read_icu_library(dest).data)
    short = original_package.short_names
    expected = {short[s] for s in icu.filter_items({s: original_package.items[f] for s, f in short.items()})}
    assert set(new.items) == expected
    assert new.header == original_package.header and new.prefix == original_package.prefix
    for name, data in new.items.items():
        assert data == original_package.items[name], name
    # TOC: names sorted bytewise (ICU binary-searches them), items 16-aligned from the package start
    package = icu.read_icu_library(dest).data
    header_size = len(new.header)
    (count,) = struct.unpack_from("<I", package, header_size)
    entries = [struct.unpack_from("<II", package, header_size + 4 + 8 * i) for i in range(count)]
    names = [package[header_size + n : package.index(b"\0", header_size + n)] for n, _ in entries]
    assert names == sorted(names) and len(names) == len(expected)
    assert all((header_size + d) % 16 == 0 for _, d in entries)
    assert report["items_kept"] == len(expected)
    assert report["items_kept"] + report["items_dropped"] == len(original_package.items)
    assert report["new_bytes"] < report["old_bytes"] / 2


def test_policy_keeps_what_qt_uses_and_drops_the_rest(original_package):
    short = original_package.short_names
    items = {s: original_package.items[f] for s, f in short.items()}
    kept = set(icu.filter_items(items))
    for name in ("cnvalias.icu", "coll/ucadata.icu", "coll/de.res", "coll/zh.res", "coll/root.res",
                 "zoneinfo64.res", "metaZones.res", "supplementalData.res", "root.res", "en.res", "res_index.res",
                 "ibm-5348_P100-1997.cnv", "zone/de.res", "zone/en.res", "curr/en.res", "curr/pool.res"):  # fmt: skip
        assert name in kept, name
    for name in ("gb18030.cnv", "ibm-943_P15A-2003.cnv", "brkitr/cjdict.dict", "translit/root.res", "de.res",
                 "curr/de.res", "lang/fr.res"):  # fmt: skip
        assert name in items and name not in kept, name
    english_zones = set(icu.filter_items(items, localized_zone_names=False))
    assert "zone/de.res" not in english_zones and "zone/en.res" in english_zones


def test_library_has_the_soname_and_exports_the_symbol_unversioned(filtered):
    dest, report = filtered
    dynamic = subprocess.run(["readelf", "-dW", str(dest)], capture_output=True, text=True, check=True).stdout
    assert f"Library soname: [{report['soname']}]" in dynamic
    assert report["soname"] == ICUDATA.name
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(dest)], capture_output=True, text=True, check=True)
    assert [line.split()[-1] for line in symbols.stdout.splitlines()] == [report["symbol"]]
    versions = subprocess.run(["readelf", "-VW", str(dest)], capture_output=True, text=True, check=True).stdout
    assert "No version information found" in versions


def test_missing_tools_raise_and_leave_no_file(tmp_path, monkeypatch):
    monkeypatch.setattr(icu.shutil, "which", lambda name: None)
    dest = tmp_path / ICUDATA.name
    with pytest.raises(icu.IcuFilterUnavailable, match="binutils"):
        icu.filter_icu_library(ICUDATA, dest)
    assert not dest.exists()


PROBE = r"""
import json, sys
from functools import cmp_to_key
from PySide6.QtCore import QCollator, QLocale, QStringDecoder, QTimeZone
words = ["Zürich", "Ärger", "Apfel", "Öl", "Ofen", "Straße", "Strasse", "Übel", "Ufer", "ändern", "Zebra", "Äpfel"]
collator = QCollator(QLocale("de"))
swedish = QCollator(QLocale("sv"))
berlin = QTimeZone(b"Europe/Berlin")
print(json.dumps({
    "sorted": sorted(words, key=cmp_to_key(collator.compare)),
    "sorted_sv": sorted(words, key=cmp_to_key(swedish.compare)),
    "upper_tr": QLocale("tr").toUpper("istanbul ılık"),
    "windows-1252": QStringDecoder("windows-1252").isValid(),
    "Shift_JIS": QStringDecoder("Shift_JIS").isValid(),
    "zone_de": berlin.displayName(QTimeZone.StandardTime, QTimeZone.LongName, QLocale("de")),
    "mapped": sorted({line.split()[-1] for line in open("/proc/self/maps") if "libicudata" in line}),
}))
"""


def _probe(preload: Path | None) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("LD_PRELOAD", None)
    if preload is not None:
        env["LD_PRELOAD"] = str(preload)
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_qt_with_the_filtered_library_sorts_german_and_swedish_like_the_original(filtered):
    dest, _ = filtered
    before, after = _probe(None), _probe(dest)
    assert before["mapped"] == [str(ICUDATA.resolve())]
    assert after["mapped"] == [str(dest.resolve())]
    assert after["sorted"] == before["sorted"]
    assert before["sorted"][:4] == ["ändern", "Apfel", "Äpfel", "Ärger"]  # ICU's German order, not code points
    assert after["sorted_sv"] == before["sorted_sv"]
    assert before["sorted_sv"][-5:] == ["Zürich", "ändern", "Äpfel", "Ärger", "Öl"]  # Swedish: Ä, Ö after Z
    assert after["upper_tr"] == before["upper_tr"] == "İSTANBUL ILIK"
    assert after["zone_de"] == before["zone_de"] == "Mitteleuropäische Normalzeit"
    assert after["windows-1252"] and before["windows-1252"]
    assert before["Shift_JIS"] and not after["Shift_JIS"]  # multi-byte converters are dropped by design


def test_pyinstaller_toc_gets_the_filtered_library_and_other_entries_stay(tmp_path):
    toc = [
        ("PySide6/Qt/lib/libicudata.so.73", str(ICUDATA), "BINARY"),
        ("PySide6/Qt/lib/libicuuc.so.73", str(ICUDATA.with_name("libicuuc.so.73")), "BINARY"),
    ]
    new_toc, notes = icu.filter_icu_toc(toc, tmp_path)
    assert new_toc[1] == toc[1]
    assert new_toc[0][0] == toc[0][0] and new_toc[0][2] == "BINARY"
    assert Path(new_toc[0][1]) == tmp_path / "libicudata.so.73" and Path(new_toc[0][1]).is_file()
    assert len(notes) == 1 and "MB" in notes[0]
