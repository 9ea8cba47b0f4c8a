"""Shrink ICU's data library (``libicudata.so.NN``, 30.6 MB in PySide6 6.11) to the items Qt can use.

The library holds no code: its one exported symbol ``icudtNN_dat`` is an ICU *common data package*:

    header      uint16 headerSize, 0xda 0x27, UDataInfo (dataFormat "CmnD"), copyright; headerSize bytes
    TOC         uint32 count, then count x {uint32 nameOffset, uint32 dataOffset}, offsets relative to the TOC
    names       NUL-terminated "icudt73l/coll/de.res", ... sorted bytewise (ICU binary-searches them)
    items       each starting at a multiple of 16 from the package start, gaps filled with 0xaa

An item has no stored length: it runs to the next item's offset (the last one to the end of the symbol's data).
``filter_icu_library`` keeps the items chosen by ``filter_items``, rebuilds the TOC, copies every kept item's
bytes unchanged at the same alignment, and links a new library with the same SONAME exporting the same symbol
(binutils ``as`` + ``ld``, or ``cc``), so ``libicuuc`` (which imports the symbol unversioned) loads it unchanged.

Qt 6 (``nm -D --undefined-only libQt6Core.so.6 | grep _73``) calls ICU only for converters (``ucnv_*``),
locale case mapping (``u_strToUpper/Lower``: casing data is compiled into libicuuc), collation (``ucol_*``) and
time-zone display names (``ucal_open``, ``ucal_getTimeZoneDisplayName``, ``ucal_getCanonicalTimeZoneID``).
See ``filter_items`` for the resulting KEEP policy; ``icu_probe.py`` compares Qt's behaviour before and after.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ITEM_ALIGN = 16
PAD_BYTE = b"\xaa"
SYMBOL_RE = re.compile(rb"icudt\d+[a-z]?_dat")

SHT_DYNAMIC, SHT_DYNSYM, SHT_GNU_VERDEF = 6, 11, 0x6FFFFFFD
DT_SONAME = 14


class IcuFilterUnavailable(RuntimeError):
    """The library cannot be filtered here (no binutils/cc, unexpected format); keep the original library."""


# ---------------------------------------------------------------------------------------------------- ELF input


@dataclass(frozen=True)
class IcuLibrary:
    """What a data library exports: its SONAME, its data symbol's name and bytes, its ELF machine number."""

    soname: str
    symbol: str
    data: bytes
    machine: int


def read_icu_library(path: str | os.PathLike) -> IcuLibrary:
    """Read SONAME and the ``icudt*_dat`` symbol's bytes of a 64-bit ELF data library (dynamic symbol table)."""
    blob = Path(path).read_bytes()
    if blob[:4] != b"\x7fELF" or blob[4] != 2 or blob[5] not in (1, 2):
        raise IcuFilterUnavailable(f"{path}: not a 64-bit ELF file")
    e = "<" if blob[5] == 1 else ">"
    (machine,) = struct.unpack_from(e + "H", blob, 0x12)
    (shoff,) = struct.unpack_from(e + "Q", blob, 0x28)
    shentsize, shnum = struct.unpack_from(e + "HH", blob, 0x3A)
    sections = [struct.unpack_from(e + "IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]

    def cstring(section, offset):
        start = sections[section][4] + offset
        return blob[start : blob.index(b"\0", start)]

    if any(s[1] == SHT_GNU_VERDEF for s in sections):
        raise IcuFilterUnavailable(f"{path}: defines symbol versions; the rebuilt library would drop them")
    soname = symbol = data = None
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind == SHT_DYNAMIC:
            for pos in range(offset, offset + size, 16):
                tag, value = struct.unpack_from(e + "qQ", blob, pos)
                if tag == DT_SONAME:
                    soname = cstring(link, value).decode()
        elif kind == SHT_DYNSYM:
            for pos in range(offset, offset + size, entsize):
                st_name, _info, _other, shndx, value, st_size = struct.unpack_from(e + "IBBHQQ", blob, pos)
                name = cstring(link, st_name)
                if SYMBOL_RE.fullmatch(name) and 0 < shndx < len(sections):
                    sec_addr, sec_offset, sec_size = sections[shndx][3:6]
                    start = sec_offset + value - sec_addr
                    end = start + st_size if st_size else sec_offset + sec_size
                    symbol, data = name.decode(), blob[start:end]
    if not soname or not symbol:
        raise IcuFilterUnavailable(f"{path}: no SONAME or no exported icudt*_dat symbol")
    return IcuLibrary(soname, symbol, data, machine)


# ------------------------------------------------------------------------------------------------ ICU package


@dataclass(frozen=True)
class IcuPackage:
    """A parsed common data package: the header bytes, the name prefix ("icudt73l/") and the items by full name."""

    header: bytes
    prefix: str
    items: dict[str, bytes]
    endian: str

    @property
    def short_names(self) -> dict[str, str]:
        """Item names without the package prefix ("coll/de.res") -> full names."""
        return {name[len(self.prefix) :]: name for name in self.items}


def parse_package(data: bytes) -> IcuPackage:
    """Parse a common data package; each item's bytes run up to the next item (alignment padding included)."""
    if len(data) < 32 or data[2:4] != b"\xda\x27" or data[12:16] != b"CmnD":
        raise IcuFilterUnavailable("not an ICU common data package (magic 0xda27, format CmnD)")
    endian = ">" if data[8] else "<"
    (header_size,) = struct.unpack_from(endian + "H", data, 0)
    toc = data[header_size:]
    (count,) = struct.unpack_from(endian + "I", toc, 0)
    entries = [struct.unpack_from(endian + "II", toc, 4 + 8 * i) for i in range(count)]
    names = [toc[n : toc.index(b"\0", n)].decode("ascii") for n, _ in entries]
    offsets = [d for _, d in entries] + [len(toc)]
    if any(a % ITEM_ALIGN or a > b for a, b in zip(offsets, offsets[1:], strict=False)) or (header_size % ITEM_ALIGN):
        raise IcuFilterUnavailable("ICU package items are not in offset order at 16-byte alignment")
    prefix = os.path.commonprefix(names)
    prefix = prefix[: prefix.rfind("/") + 1]
    if not prefix.startswith("icudt"):
        raise IcuFilterUnavailable(f"unexpected ICU item prefix {prefix!r}")
    items = {name: toc[offsets[i] : offsets[i + 1]] for i, name in enumerate(names)}
    return IcuPackage(data[:header_size], prefix, items, endian)


def build_package(header: bytes, items: dict[str, bytes], endian: str = "<") -> bytes:
    """Serialize a package: same header, TOC sorted bytewise by name, each item 16-aligned, 0xaa padding."""
    names = sorted(items, key=lambda n: n.encode("ascii"))
    name_table = bytearray()
    name_offsets = []
    toc_head = 4 + 8 * len(names)
    for name in names:
        name_offsets.append(toc_head + len(name_table))
        name_table += name.encode("ascii") + b"\0"
    body = bytearray()
    data_start = _aligned(len(header) + toc_head + len(name_table)) - len(header)
    data_offsets = []
    for name in names:
        data_offsets.append(data_start + len(body))
        body += items[name]
        body += PAD_BYTE * (_aligned(len(body)) - len(body))
    toc = bytearray(struct.pack(endian + "I", len(names)))
    for name_offset, data_offset in zip(name_offsets, data_offsets, strict=True):
        toc += struct.pack(endian + "II", name_offset, data_offset)
    toc += name_table
    toc += PAD_BYTE * (data_start - len(toc))
    return bytes(header) + bytes(toc) + bytes(body)


def _aligned(n: int) -> int:
    return -(-n // ITEM_ALIGN) * ITEM_ALIGN


# ---------------------------------------------------------------------------------------------------- policy

# Trees keeping only root, pool, res_index and en* bundles (Qt calls no ICU API that reads the others).
REDUCED_TREES = ("brkitr", "curr", "lang", "region", "unit", "rbnf")
# Time-zone names in every language: QTimeZone::displayName and QLocale::toString(QDateTime, LongFormat).
ZONE_TREE = "zone"
# Trees dropped entirely: transliterators (utrans_*), which Qt never imports. Unknown trees are kept whole.
DROPPED_TREES = ("translit",)
STRUCTURAL_STEMS = ("root", "pool", "res_index")
LOCALE_STEM_RE = re.compile(r"[a-z]{2,3}(_[A-Za-z0-9]+)*")
CNV_STATIC_MAX_BYTES = 71  # offset of UConverterStaticData.maxBytesPerChar after the .cnv item's header


def filter_items(items: dict[str, bytes], localized_zone_names: bool = True) -> list[str]:
    """Short names ("coll/de.res") of the items to keep; ``items`` maps short names to item bytes.

    KEEP policy:
    - top level: everything (``*.icu`` incl. cnvalias.icu, ``*.nrm``, ``*.spp``, ``*.cfu``, pool/res_index/root,
      supplementalData, likelySubtags, metadata, zoneinfo64, metaZones, timezoneTypes, windowsZones, keyTypeData,
      plurals, ...) except the locale bundles (``de.res``, ``zh_Hant.res``) other than ``en*``;
    - converters (top-level ``*.cnv``): single-byte code pages only (maxBytesPerChar == 1: ISO-8859-x,
      windows-125x, IBM/DOS/Mac/EBCDIC pages, KOI8); the multi-byte CJK tables (90% of them by size) are dropped;
    - ``coll/``: everything (QCollator, QSortFilterProxyModel/QFileSystemModel sorting, in every language);
    - ``zone/``: everything; with ``localized_zone_names=False`` reduced like the trees below (time-zone names
      then fall back to English, 2.9 MB less);
    - brkitr, curr, lang, region, unit, rbnf: only root, pool, res_index and ``en*`` (no ``*.dict``/``*.brk``);
    - ``translit/``: nothing.
    Without the top-level locale bundles, GMT-offset zone names use Latin digits in locales whose default digits
    are others ("غرينتش+1" instead of "غرينتش+١"); nothing else Qt computes changes (see icu_probe.py).
    """
    reduced = REDUCED_TREES if localized_zone_names else REDUCED_TREES + (ZONE_TREE,)
    return [name for name, data in items.items() if _keep(name, data, reduced)]


def _keep(name: str, data: bytes, reduced_trees: tuple[str, ...]) -> bool:
    tree, _, leaf = name.rpartition("/")
    stem, _, ext = leaf.rpartition(".")
    structural = stem in STRUCTURAL_STEMS or stem == "en" or stem.startswith("en_")
    if tree == "":
        if ext == "cnv":
            return _max_bytes_per_char(data) == 1
        return ext != "res" or structural or not LOCALE_STEM_RE.fullmatch(stem)
    if tree in DROPPED_TREES:
        return False
    if tree in reduced_trees:
        return ext == "res" and structural
    return True


def _max_bytes_per_char(cnv: bytes) -> int:
    endian = ">" if cnv[8] else "<"
    (header_size,) = struct.unpack_from(endian + "H", cnv, 0)
    return cnv[header_size + CNV_STATIC_MAX_BYTES]


# --------------------------------------------------------------------------------------------- library output

ASM_TEMPLATE = """\
\t.section .rodata,"a"
\t.balign 16
\t.globl {symbol}
\t.type {symbol}, %object
\t.size {symbol}, {size}
{symbol}:
\t.incbin "package.bin"
\t.section .note.GNU-stack,"",%progbits
"""


def link_data_library(package: bytes, symbol: str, soname: str, dest: Path) -> None:
    """Write an ELF shared library ``dest`` with SONAME ``soname`` exporting ``symbol`` = ``package`` (read-only)."""
    assembler, linker, cc = shutil.which("as"), shutil.which("ld"), shutil.which("cc") or shutil.which("gcc")
    with tempfile.TemporaryDirectory(prefix="icudata-") as tmp:
        Path(tmp, "package.bin").write_bytes(package)
        Path(tmp, "data.s").write_text(ASM_TEMPLATE.format(symbol=symbol, size=len(package)))
        out = Path(tmp, "lib.so")
        if assembler and linker:
            steps = [
                [assembler, "-o", "data.o", "data.s"],
                [linker, "-shared", "-soname", soname, "-z", "noexecstack", "-s", "-o", str(out), "data.o"],
            ]
        elif cc:
            steps = [[cc, "-shared", "-nostdlib", f"-Wl,-soname,{soname}", "-Wl,-z,noexecstack", "-s", "-o",
                      str(out), "data.s"]]  # fmt: skip
        else:
            raise IcuFilterUnavailable("neither binutils (as, ld) nor a C compiler (cc) is on PATH")
        for cmd in steps:
            done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
            if done.returncode:
                raise IcuFilterUnavailable(f"{Path(cmd[0]).name} failed: {done.stderr.strip()[:500]}")
        shutil.copyfile(out, dest)
        os.chmod(dest, 0o755)


# ------------------------------------------------------------------------------------------------- the filter


def filter_icu_library(src: str | os.PathLike, dest: str | os.PathLike, localized_zone_names: bool = True) -> dict:
    """Write the filtered copy of ICU data library ``src`` to ``dest``; return what was kept and the sizes.

    Raises ``IcuFilterUnavailable`` (``dest`` untouched) when the tools are missing, the format is unexpected or
    the linked result does not read back as the same SONAME, symbol, machine and package; ship ``src`` then.
    """
    src, dest = Path(src), Path(dest)
    original = read_icu_library(src)
    package = parse_package(original.data)
    by_short = package.short_names
    kept = set(filter_items({short: package.items[full] for short, full in by_short.items()}, localized_zone_names))
    new_items = {full: package.items[full] for short, full in by_short.items() if short in kept}
    new_package = build_package(package.header, new_items, package.endian)
    dest.parent.mkdir(parents=True, exist_ok=True)
    linked = dest.with_name(dest.name + ".new")
    try:
        link_data_library(new_package, original.symbol, original.soname, linked)
        built = read_icu_library(linked)
        if built != IcuLibrary(original.soname, original.symbol, new_package, original.machine):
            raise IcuFilterUnavailable(f"{linked}: the linked library does not read back as built")
        os.replace(linked, dest)
    finally:
        linked.unlink(missing_ok=True)
    return {
        "soname": original.soname,
        "symbol": original.symbol,
        "old_bytes": src.stat().st_size,
        "new_bytes": dest.stat().st_size,
        "items_kept": len(new_items),
        "items_dropped": len(package.items) - len(new_items),
        "kept_item_bytes": sum(map(len, new_items.values())),
        "dropped_item_bytes": sum(len(d) for n, d in package.items.items() if n not in new_items),
    }


def filter_icu_toc(toc: list[tuple], work_dir: str | os.PathLike) -> tuple[list[tuple], list[str]]:
    """PyInstaller TOC with every ``libicudata.so.*`` binary's source replaced by a filtered copy in ``work_dir``.

    Returns the new TOC and one line per library (sizes, or why the original is kept).
    """
    out, notes = [], []
    for dest, src, kind in toc:
        if kind == "BINARY" and src and re.fullmatch(r"libicudata\.so(\.\d+)*", Path(dest).name):
            target = Path(work_dir) / Path(dest).name
            try:
                report = filter_icu_library(src, target)
                notes.append(f"{dest}: {report['old_bytes'] / 2**20:.1f} -> {report['new_bytes'] / 2**20:.1f} MB")
                src = str(target)
            except (IcuFilterUnavailable, OSError) as error:
                notes.append(f"{dest}: kept the original ({error})")
        out.append((dest, src, kind))
    return out, notes


def main(argv: list[str] | None = None) -> int:
    """``python icu_data_filter.py SRC DEST``: filter SRC into DEST and print the sizes."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: icu_data_filter.py SRC_LIBICUDATA DEST", file=sys.stderr)
        return 2
    report = filter_icu_library(argv[0], argv[1])
    mb = 1 << 20
    print(f"{report['soname']}: {report['old_bytes'] / mb:.1f} MB -> {report['new_bytes'] / mb:.1f} MB")
    print(f"items kept {report['items_kept']}, dropped {report['items_dropped']} "
          f"({report['dropped_item_bytes'] / mb:.1f} MB)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
