"""Exercise every Qt feature backed by ICU and compare the results with and without a filtered ICU data library.

    python packaging/icu_probe.py [--png PATH] [--trace]     # one run: JSON results on stdout
    python packaging/icu_probe.py --compare FILTERED_LIB     # two runs (original / LD_PRELOAD=FILTERED_LIB), diff

The JSON holds, besides the results, ``mapped_icudata``: the ``libicudata`` files mapped into the process (from
/proc/self/maps), proving which data library was used. A preloaded library with the same SONAME satisfies
libicuuc's DT_NEEDED, so the original is then not loaded at all. ``--trace`` adds the ICU data items whose pages
the workload touched (pagemap present bits after MADV_RANDOM + MADV_DONTNEED on the mapping; page granularity,
so an item sharing a page with a touched one may be listed too).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WORDS = [
    "Äpfel", "Zebra", "Ärger", "Öl", "Ozean", "Übel", "Ufer", "Straße", "Strasse", "Schiff", "Çelik", "ılık",
    "İstanbul", "Istanbul", "ışık", "ökse", "Łódź", "Lublin", "Zürich", "Østergaard", "Aalborg", "Ångström",
    "Émile", "Eva", "côte", "coté", "Ćwikła", "Żaba", "Zorro", "chata", "Hahn", "東京", "大阪", "北京", "上海",
    "さくら", "カタカナ", "ひらがな", "漢字", "中文", "张伟", "王芳", "李娜", "Nguyễn", "file10", "file2", "File1",
]  # fmt: skip
COLLATION_LOCALES = ["en", "de", "sv", "fr", "tr", "pl", "ja", "zh", "es", "cs", "da", "fi", "ko", "ru", "ar"]
CASE_SAMPLES = {
    "tr": "istanbul ılık İSTANBUL IŞIK",
    "de": "straße Maße ÄRGER",
    "el": "άδεια Σίσυφος ΣΊΣΥΦΟΣ όμορφος",
    "en": "istanbul ÄRGER Σίσυφος",
    "lt": "i̇̀ Į̃",
    "nl": "ijsland IJSLAND",
}
# Qt codec name -> (Python codec, sample text) for decoding through QXmlStreamReader's encoding declaration.
CODECS = {
    "UTF-8": ("utf-8", "Grüße 東京 Привет"),
    "UTF-16": ("utf-16", "Grüße 東京 Привет"),
    "ISO-8859-1": ("latin-1", "Grüße, Ärzte"),
    "ISO-8859-2": ("iso8859-2", "Łódź Żółć"),
    "ISO-8859-15": ("iso8859-15", "Grüße €"),
    "windows-1250": ("cp1250", "Łódź Żółć"),
    "windows-1251": ("cp1251", "Привет"),
    "windows-1252": ("cp1252", "Grüße € „x“"),
    "IBM850": ("cp850", "Grüße Ärzte"),
    "KOI8-R": ("koi8_r", "Привет"),
    "macintosh": ("mac_roman", "Grüße"),
    "Shift_JIS": ("shift_jis", "日本語テキスト"),
    "EUC-JP": ("euc_jp", "日本語テキスト"),
    "ISO-2022-JP": ("iso2022_jp", "日本語テキスト"),
    "GB18030": ("gb18030", "中文文本"),
    "GBK": ("gbk", "中文文本"),
    "Big5": ("big5", "中文文本"),
    "EUC-KR": ("euc_kr", "한국어"),
}
TIME_ZONES = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "Europe/Istanbul"]
DISPLAY_LOCALES = ["en", "en_GB", "de", "fr", "ja", "ar", "tr"]
FORMAT_LOCALES = ["en_US", "de_DE", "fr_FR", "sv_SE", "ja_JP", "zh_CN", "ar_EG", "hi_IN", "tr_TR", "pl_PL"]


def collation_results():
    from PySide6.QtCore import QCollator, QLocale, Qt

    out = {}
    for name in COLLATION_LOCALES:
        collator = QCollator(QLocale(name))
        out[f"sort/{name}"] = _sorted_with(collator, WORDS)
        collator.setNumericMode(True)
        collator.setCaseSensitivity(Qt.CaseInsensitive)
        out[f"sort-numeric-ci/{name}"] = _sorted_with(collator, WORDS)
    return out


def _sorted_with(collator, words):
    from functools import cmp_to_key

    return sorted(words, key=cmp_to_key(collator.compare))


def case_results():
    from PySide6.QtCore import QLocale

    out = {}
    for name, text in CASE_SAMPLES.items():
        locale = QLocale(name)
        out[f"case/{name}"] = [locale.toUpper(text), locale.toLower(text)]
    return out


def codec_results():
    from PySide6.QtCore import (
        QBuffer,
        QByteArray,
        QIODevice,
        QStringConverter,
        QStringDecoder,
        QStringEncoder,
        QXmlStreamReader,
    )

    out = {}
    for name, (py_codec, text) in CODECS.items():
        decoder, encoder = QStringDecoder(name), QStringEncoder(name)
        document = f'<?xml version="1.0" encoding="{name}"?><t>{text}</t>'.encode(py_codec)
        buffer = QBuffer()
        buffer.setData(QByteArray(document))
        buffer.open(QIODevice.ReadOnly)
        reader = QXmlStreamReader(buffer)
        decoded = None
        while not reader.atEnd():
            if reader.readNext() == QXmlStreamReader.Characters:
                decoded = reader.text()
        out[f"codec/{name}"] = {
            "decoder_valid": decoder.isValid(),
            "encoder_valid": encoder.isValid(),
            "xml_decoded_ok": decoded == text,
            "xml_error": reader.errorString(),
        }
    codecs = sorted(QStringConverter.availableCodecs())
    out["codec/available_count"] = len(codecs)
    out["codec/available"] = codecs
    return out


def time_zone_results():
    from PySide6.QtCore import QDate, QDateTime, QLocale, QTime, QTimeZone

    out = {}
    winter = QDateTime(QDate(2024, 1, 15), QTime(12, 0), QTimeZone.UTC)
    summer = QDateTime(QDate(2024, 7, 15), QTime(12, 0), QTimeZone.UTC)
    for zone_id in TIME_ZONES:
        zone = QTimeZone(zone_id.encode())
        row = {
            "valid": zone.isValid(),
            "offsets": [zone.offsetFromUtc(winter), zone.offsetFromUtc(summer)],
            "abbreviations": [zone.abbreviation(winter), zone.abbreviation(summer)],
            "dst": [zone.isDaylightTime(winter), zone.isDaylightTime(summer)],
        }
        for name in DISPLAY_LOCALES:
            locale = QLocale(name)
            row[name] = [
                zone.displayName(kind, style, locale)
                for kind in (QTimeZone.StandardTime, QTimeZone.DaylightTime, QTimeZone.GenericTime)
                for style in (QTimeZone.LongName, QTimeZone.ShortName, QTimeZone.OffsetName)
            ]
            row[name + "/at"] = zone.displayName(summer, QTimeZone.LongName, locale)
        out[f"tz/{zone_id}"] = row
    out["tz/available_count"] = len(QTimeZone.availableTimeZoneIds())
    return out


def locale_format_results():
    from PySide6.QtCore import QDate, QDateTime, QLocale, QTime, QTimeZone

    out = {}
    date = QDate(2024, 3, 5)
    moment = QDateTime(date, QTime(14, 30), QTimeZone(b"Europe/Berlin"))
    for name in FORMAT_LOCALES:
        locale = QLocale(name)
        out[f"format/{name}"] = [
            locale.toString(date, QLocale.LongFormat),
            locale.toString(date, QLocale.ShortFormat),
            locale.toString(moment, QLocale.LongFormat),
            locale.toString(moment, QLocale.ShortFormat),
            locale.toString(moment, "yyyy-MM-dd HH:mm t"),
            locale.toString(1234567.891, "f", 2),
            locale.toString(-42),
            locale.toCurrencyString(1234.5),
            locale.monthName(3),
            locale.dayName(2),
            locale.nativeLanguageName(),
            locale.nativeTerritoryName(),
            locale.toUpper("istanbul"),
        ]
    return out


def boundary_results():
    from PySide6.QtCore import QTextBoundaryFinder

    out = {}
    samples = {"thai": "ภาษาไทยง่ายนิดเดียว", "ja": "日本語のテキストです。", "en": "Don't stop-now, 3.14!"}
    for label, text in samples.items():
        finder = QTextBoundaryFinder(QTextBoundaryFinder.Word, text)
        positions = [0]
        while (pos := finder.toNextBoundary()) != -1:
            positions.append(pos)
        out[f"words/{label}"] = positions
    return out


def widget_results(png_path):
    from PySide6.QtCore import QSortFilterProxyModel, Qt
    from PySide6.QtGui import QStandardItem, QStandardItemModel
    from PySide6.QtWidgets import QApplication, QTableView

    app = QApplication.instance() or QApplication([])
    model = QStandardItemModel()
    model.setHorizontalHeaderLabels(["Name", "Stadt", "Größe"])
    for i, word in enumerate(WORDS[:24]):
        model.appendRow([QStandardItem(word), QStandardItem(WORDS[-1 - i]), QStandardItem(f"{i * 1.5:.1f} µm")])
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortLocaleAware(True)
    proxy.sort(0, Qt.AscendingOrder)
    view = QTableView()
    view.setModel(proxy)
    view.resize(520, 700)
    view.show()
    app.processEvents()
    image = view.grab().toImage()
    if png_path:
        image.save(str(png_path))
    pixels = bytes(image.constBits())
    return {
        "widget/proxy_order": [proxy.index(r, 0).data() for r in range(proxy.rowCount())],
        "widget/image_sha256": hashlib.sha256(pixels).hexdigest(),
        "widget/image_size": [image.width(), image.height()],
    }


def mapped_icudata():
    with open("/proc/self/maps") as maps:
        return sorted({line.split(None, 5)[5].strip() for line in maps if "libicudata" in line})


def collect(png_path=None):
    """All results, keyed "<feature>/<case>"; the widget grab is saved to ``png_path`` when given."""
    results = {}
    for part in (collation_results, case_results, codec_results, time_zone_results, locale_format_results,
                 boundary_results):  # fmt: skip
        results.update(part())
    results.update(widget_results(png_path))
    return results


# ------------------------------------------------------------------------------------------------------ tracing


def _icudata_mappings():
    rows = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            # the first read-only mapping holds the data; later ones hold .dynamic, which ld.so edits in place
            if len(fields) == 6 and "libicudata" in fields[5] and fields[1] == "r--p" and int(fields[2], 16) == 0:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                rows.append((start, end, int(fields[2], 16), fields[5].strip()))
    return rows


def reset_pages(rows):
    """Advise random access (no fault-around) and drop the page-table entries of the ICU data mappings."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for start, end, _offset, _path in rows:
        for advice in (1, 4):  # MADV_RANDOM, MADV_DONTNEED
            if libc.madvise(start, end - start, advice):
                raise OSError(ctypes.get_errno(), "madvise failed")


def touched_items(rows):
    """Names of ICU items overlapping a page of the data mappings that is present in this process."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import struct

    import icu_data_filter

    page = os.sysconf("SC_PAGE_SIZE")
    path = rows[0][3]
    library = icu_data_filter.read_icu_library(path)
    package = icu_data_filter.parse_package(library.data)
    package_offset = Path(path).read_bytes().find(library.data[:4096])
    toc_offset = package_offset + len(package.header)
    spans = []
    blob = library.data[len(package.header) :]
    for i, name in enumerate(package.items):
        _, data_offset = struct.unpack_from("<II", blob, 4 + 8 * i)
        spans.append((toc_offset + data_offset, toc_offset + data_offset + len(package.items[name]), name))
    present = set()
    with open("/proc/self/pagemap", "rb") as pagemap:
        for start, end, offset, _path in rows:
            pagemap.seek(start // page * 8)
            entries = pagemap.read((end - start) // page * 8)
            for i in range(len(entries) // 8):
                if int.from_bytes(entries[8 * i : 8 * i + 8], "little") >> 63:
                    present.add(offset + i * page)
    return sorted(
        name[len(package.prefix) :]
        for lo, hi, name in spans
        if any(p < hi and p + page > lo for p in range(lo // page * page, hi, page) if p in present)
    )


# ------------------------------------------------------------------------------------------------------ compare


def run_probe(preload=None, png_path=None):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = str(Path(preload).resolve())
    cmd = [sys.executable, str(Path(__file__).resolve())] + (["--png", str(png_path)] if png_path else [])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def compare(filtered, png_dir):
    original = run_probe(None, Path(png_dir, "icu_probe_original.png"))
    reduced = run_probe(filtered, Path(png_dir, "icu_probe_filtered.png"))
    print(f"original run mapped: {original.pop('mapped_icudata')}")
    print(f"filtered run mapped: {reduced.pop('mapped_icudata')}")
    same = [k for k in original if original[k] == reduced.get(k)]
    differ = [k for k in original if original[k] != reduced.get(k)]
    print(f"identical: {len(same)} of {len(original)} results")
    for key in differ:
        a, b = original[key], reduced.get(key)
        if key == "codec/available":
            print(f"DIFFERS {key}: dropped {sorted(set(a) - set(b))}; added {sorted(set(b) - set(a))}")
        elif isinstance(a, dict):
            changed = {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
            print(f"DIFFERS {key}: " + "; ".join(f"{k}: {x!r} -> {y!r}" for k, (x, y) in changed.items()))
        else:
            print(f"DIFFERS {key}: {a!r} -> {b!r}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--png", type=Path, help="save the QTableView grab here")
    parser.add_argument("--trace", action="store_true", help="list the ICU data items the workload touched")
    parser.add_argument("--compare", type=Path, metavar="FILTERED_LIB", help="run twice and diff the results")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(args.compare, tempfile.gettempdir())
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import PySide6.QtCore  # noqa: F401  (maps the ICU libraries)

    rows = _icudata_mappings()
    if args.trace:
        reset_pages(rows)
    results = collect(args.png)
    results["mapped_icudata"] = mapped_icudata()
    if args.trace:
        results["touched_items"] = touched_items(rows)
    json.dump(results, sys.stdout, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
