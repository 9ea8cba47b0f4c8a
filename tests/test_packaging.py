"""Helpers of the standalone bundle build (packaging/): loader-safe stripping, licence notices, the bundle's import
self-test and the smoke test's isolation. The bundle itself is built and smoke-tested by packaging/ci_bundle.sh."""

from __future__ import annotations

import ctypes
import importlib.metadata
import importlib.util
import shutil
import struct
import sys
import sysconfig
from pathlib import Path

import pytest

PACKAGING = Path(__file__).resolve().parent.parent / "packaging"


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


elfstrip = load("optrr_pkg_elfstrip", PACKAGING / "elfstrip.py")
third_party = load("optrr_pkg_third_party", PACKAGING / "third_party.py")
self_test = load("optrr_pkg_self_test", PACKAGING / "entry" / "bundle_self_test.py")
smoke = load("optrr_pkg_smoke", PACKAGING / "smoke_test.py")

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF files exist on Linux only")


def stdlib_extension() -> Path:
    """A small extension module of the running Python (built with the interpreter, not from a wheel)."""
    import _json

    return Path(_json.__file__)


def first_load_header_offset(data: bytes) -> int:
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        start = phoff + i * phentsize
        if struct.unpack_from("<I", data, start)[0] == elfstrip.PT_LOAD:
            return start
    raise AssertionError("no PT_LOAD segment")


@linux_only
def test_load_segment_check_accepts_real_libraries_and_rejects_misaligned_ones(tmp_path):
    import numpy

    library = next(Path(numpy.__file__).parent.glob("_core/_multiarray_umath*.so"))
    assert elfstrip.is_elf(library) and elfstrip.load_segments_ok(library)
    data = bytearray(library.read_bytes()[:65536])
    header = first_load_header_offset(bytes(data))
    p_offset = struct.unpack_from("<Q", data, header + 8)[0]
    struct.pack_into("<Q", data, header + 8, p_offset + 8)  # p_vaddr - p_offset no longer a page multiple
    broken = tmp_path / "broken.so"
    broken.write_bytes(bytes(data))
    assert not elfstrip.load_segments_ok(broken)
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file")
    assert not elfstrip.is_elf(text) and not elfstrip.load_segments_ok(text)


@linux_only
@pytest.mark.skipif(shutil.which("strip") is None, reason="binutils' strip is not installed")
def test_stripped_copy_is_smaller_loadable_and_cached(tmp_path):
    source = stdlib_extension()
    copy = elfstrip.stripped_copy(str(source), tmp_path)
    if copy == str(source):  # already stripped by whoever built this Python: the original is kept
        assert elfstrip.load_segments_ok(source)
        return
    assert Path(copy).stat().st_size < source.stat().st_size
    assert elfstrip.load_segments_ok(copy)
    ctypes.CDLL(copy)  # the dynamic loader accepts it
    assert elfstrip.stripped_copy(str(source), tmp_path) == copy  # second call reuses the cached copy
    toc, saved, _ = elfstrip.strip_toc([("x.so", str(source), "EXTENSION"), ("a.txt", "/dev/null", "DATA")], tmp_path)
    assert toc[0] == ("x.so", copy, "EXTENSION") and toc[1] == ("a.txt", "/dev/null", "DATA")
    assert saved == source.stat().st_size - Path(copy).stat().st_size


def test_notices_list_exactly_the_bundled_distributions_with_their_licence_texts(tmp_path):
    import numpy

    out = tmp_path / "THIRD_PARTY_LICENSES"
    names = third_party.write_notices(out, {numpy.__file__}, "9.9.9")
    assert names == ["numpy"]
    text = out.read_text(encoding="utf-8")
    assert "OptRR 9.9.9" in text
    assert f"numpy {importlib.metadata.version('numpy')}" in text
    assert "Copyright" in text and "NumPy Developers" in text  # the licence file itself, not only its name
    assert "Python " in text and "PYTHON SOFTWARE FOUNDATION LICENSE" in text.upper()
    assert "GNU LESSER GENERAL PUBLIC LICENSE" not in text.split("Summary", 1)[1]  # no Qt, so no LGPL texts


def test_notices_add_the_lgpl_texts_for_qt(tmp_path):
    import shiboken6

    out = tmp_path / "notices"
    names = third_party.write_notices(out, {shiboken6.__file__}, "1")
    assert [n.lower() for n in names] == ["shiboken6"]
    text = out.read_text(encoding="utf-8")
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in text and "GNU GENERAL PUBLIC LICENSE" in text


def test_self_test_finds_extension_modules_but_not_libraries(tmp_path):
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".cpython-311-x86_64-linux-gnu.so"
    files = [
        f"numpy/_core/_multiarray_umath{suffix}",
        f"python3.11/lib-dynload/_json{suffix}",
        "PySide6/QtCore.abi3.so",
        "numpy.libs/libscipy_openblas64_.so",
        "pyarrow/libarrow.so.2600",
        f"cryptography-48.0.0.dist-info/x{suffix}",
    ]
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    assert self_test.extension_modules(str(tmp_path)) == ["PySide6.QtCore", "_json", "numpy._core._multiarray_umath"]


def test_smoke_test_hides_no_folder_twice_and_never_the_system_root():
    hidden = smoke.hidden_paths()
    assert str(Path(__file__).resolve().parent.parent) in hidden  # the source tree is hidden from the bundle
    for path in hidden:
        assert path not in ("/", "/usr", "/usr/local", "/tmp")
        assert not any(path.startswith(other + "/") for other in hidden if other != path)


def test_entry_script_picks_the_program_by_the_name_it_was_started_by():
    entry = load("optrr_pkg_entry", PACKAGING / "entry" / "run_optrr.py")
    for name in ("optrr-gui", "/opt/optrr/optrr-gui", "C:\\OptRR\\optrr-gui.exe", "OPTRR-GUI.EXE"):
        assert entry.wants_gui(name.replace("\\", "/")), name
    for name in ("optrr", "/opt/optrr/optrr", "optrr.exe", "/home/u/.local/bin/optrr", "python3"):
        assert not entry.wants_gui(name), name
