"""Strip symbol tables from ELF shared libraries for the Linux bundle, keeping only results the loader accepts.

``strip`` mis-lays-out libraries that ``patchelf`` has edited (auditwheel-repaired wheels such as numpy's
OpenBLAS): their PT_LOAD segments end up with offsets the dynamic loader rejects ("ELF load command
address/offset not page-aligned"). Each stripped copy is therefore checked with the loader's own rules
(p_align a multiple of the page size, p_vaddr = p_offset modulo p_align) and the original is kept when the check
fails or stripping saves nothing. Copies are cached by source path, size and modification time.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
from pathlib import Path

PAGE = 4096
PT_LOAD = 1


def is_elf(path: str | os.PathLike) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def load_segments_ok(path: str | os.PathLike) -> bool:
    """True when every PT_LOAD segment of a 64-bit little-endian ELF file satisfies the loader's alignment rules."""
    with open(path, "rb") as f:
        header = f.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
            return False
        (phoff,) = struct.unpack_from("<Q", header, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", header, 0x36)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, _filesz, _memsz, p_align = struct.unpack_from(
            "<IIQQQQQQ", table, i * phentsize
        )
        if p_type != PT_LOAD:
            continue
        if p_align < PAGE or p_align % PAGE or (p_vaddr - p_offset) % p_align:
            return False
    return True


def stripped_copy(src: str, cache_dir: str | os.PathLike) -> str:
    """Path of a stripped copy of ``src`` that the loader accepts, or ``src`` itself."""
    st = os.stat(src)
    key = hashlib.sha1(f"{os.path.realpath(src)}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]
    target = Path(cache_dir) / key / os.path.basename(src)
    verdict = target.with_name(target.name + ".keep-original")
    if target.exists():
        return str(target)
    if verdict.exists():
        return src
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    shutil.copy2(src, tmp)
    result = subprocess.run(["strip", "--strip-unneeded", str(tmp)], capture_output=True)
    if result.returncode != 0 or not load_segments_ok(tmp) or tmp.stat().st_size >= st.st_size:
        tmp.unlink()
        verdict.touch()
        return src
    os.replace(tmp, target)
    return str(target)


def strip_toc(toc, cache_dir):
    """Replace the sources of ELF binaries / extensions in a PyInstaller TOC by loader-safe stripped copies."""
    out, saved, kept = [], 0, []
    for dest, src, kind in toc:
        if kind in ("BINARY", "EXTENSION") and src and is_elf(src):
            new = stripped_copy(src, cache_dir)
            if new != src:
                saved += os.path.getsize(src) - os.path.getsize(new)
            elif load_segments_ok(src):
                kept.append(dest)
            src = new
        out.append((dest, src, kind))
    return out, saved, kept
