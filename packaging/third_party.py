"""Write THIRD_PARTY_LICENSES for a bundle: the notices of exactly the distributions whose files it contains.

A distribution is listed when one of its installed files is a source of the bundle (PyInstaller's TOC of pure
modules, extension modules, shared libraries and data files). For each one the file gives its name, version and
declared licence, followed by the full text of every licence file the distribution ships. The Python runtime's
own licence is added, and the LGPL-3.0 / GPL-3.0 texts for Qt for Python (whose wheels ship no licence file).
Used by optrr.spec at build time; run it directly to preview the notices of the current environment:

    python3 packaging/third_party.py OUT
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Distributions under the Qt licence whose wheels do not carry the licence text.
QT_DISTRIBUTIONS = {"pyside6", "pyside6-essentials", "pyside6-addons", "shiboken6"}

HEADER = """\
THIRD-PARTY SOFTWARE NOTICES AND LICENCES
=========================================

OptRR {version} is distributed under the MIT licence (see LICENSE). This bundle also contains the Python
runtime and the third-party packages listed below, each under its own licence, reproduced in full after the
summary. None of them has been modified, except that the Linux bundle's shared libraries have their symbol
tables stripped (strip --strip-unneeded).

Qt for Python (PySide6, shiboken6) and the Qt 6 libraries are used under the GNU Lesser General Public License
version 3 (LGPL-3.0). They are included as separate shared libraries (unmodified but for stripping) in the folder
_internal/PySide6 (on macOS: OptRR.app/Contents/Frameworks/PySide6), so you can replace them with your own
compatible build of the same Qt / PySide6 version. The complete corresponding source code is available from
the Qt Project (download.qt.io, code.qt.io) and on request from the OptRR developers. The Qt libraries
themselves contain third-party components (e.g. FreeType, HarfBuzz, libpng, zlib, PCRE2, ICU, double-conversion)
under their own permissive licences, listed in Qt's documentation page "Licenses Used in Qt".
The texts of the LGPL-3.0 and of the GPL-3.0 that it incorporates are at the end of this file.

Summary
-------
"""


def python_licence() -> tuple[str, str]:
    """Version and licence text of the Python runtime that PyInstaller embeds."""
    version = ".".join(str(v) for v in sys.version_info[:3])
    for candidate in (
        Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "LICENSE.txt",
        Path(sys.base_prefix) / "LICENSE.txt",
        Path(sys.base_prefix) / "Lib" / "LICENSE.txt",
        Path(sys.base_prefix) / "share" / "doc" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "copyright",
        Path("/usr/share/doc") / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "copyright",
    ):
        if candidate.is_file():
            return version, candidate.read_text(encoding="utf-8", errors="replace")
    return version, "Python Software Foundation License Version 2 (PSF-2.0); see https://docs.python.org/3/license.html"


def declared_licence(dist: metadata.Distribution) -> str:
    meta = dist.metadata
    expression = meta.get("License-Expression")
    if expression:
        return expression.strip()
    text = (meta.get("License") or "").strip()
    if text and "\n" not in text and len(text) < 80:
        return text
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    if classifiers:
        return "; ".join(classifiers)
    return "see the licence text below"


def licence_files(dist: metadata.Distribution) -> list[tuple[str, str]]:
    """(path inside the distribution, text) of its licence / notice / copying files."""
    found = []
    for entry in dist.files or []:
        name = entry.name.upper()
        parts = {p.lower() for p in entry.parts}
        if not (
            any(word in name for word in ("LICEN", "COPYING", "NOTICE", "AUTHORS"))
            or "licenses" in parts
            or "licences" in parts
        ):
            continue
        if name.endswith((".PY", ".PYC", ".PYI", ".SO", ".DLL", ".PYD")):
            continue
        path = Path(entry.locate())
        if path.is_file():
            found.append((str(entry), path.read_text(encoding="utf-8", errors="replace")))
    return sorted(found)


def bundled_distributions(sources: set[str]) -> list[metadata.Distribution]:
    """Installed distributions with at least one file among ``sources`` (absolute, normalised paths)."""
    basenames = {os.path.basename(s) for s in sources}
    chosen = {}
    for dist in metadata.distributions():
        name = (dist.metadata.get("Name") or "").lower()
        if not name or name in chosen or name == "optrr":
            continue
        for entry in dist.files or []:
            if entry.name in basenames and os.path.normcase(os.path.realpath(entry.locate())) in sources:
                chosen[name] = dist
                break
    return [chosen[k] for k in sorted(chosen)]


def notices_text(dists: list[metadata.Distribution], version: str) -> str:
    py_version, py_text = python_licence()
    rows = [("Python", py_version, "PSF-2.0", "https://www.python.org")]
    rows += [(d.metadata["Name"], d.version, declared_licence(d), d.metadata.get("Home-page") or "") for d in dists]
    width = max(len(r[0]) for r in rows)
    out = [HEADER.format(version=version)]
    out += [f"{name.ljust(width)}  {ver:<14} {lic}" for name, ver, lic, _ in rows]
    out.append("")
    out.append(_section("Python", py_version, "PSF-2.0", [("LICENSE.txt", py_text)]))
    uses_qt = False
    for dist in dists:
        name = dist.metadata["Name"]
        texts = licence_files(dist)
        if name.lower() in QT_DISTRIBUTIONS:
            uses_qt = True
            if not texts:
                note = "Licensed under LGPL-3.0; full text at the end of this file."
                texts = [("(no licence file in the wheel)", note)]
        out.append(_section(name, dist.version, declared_licence(dist), texts))
    if uses_qt:
        for title in ("LGPL-3.0", "GPL-3.0"):
            text = (HERE / "licenses" / f"{title}.txt").read_text(encoding="utf-8")
            out.append(_section(title, "", "full text (applies to Qt for Python and Qt 6)", [(title, text)]))
    return "\n".join(out)


def _section(name: str, version: str, licence: str, texts: list[tuple[str, str]]) -> str:
    rule = "=" * 100
    parts = [rule, f"{name} {version}".strip() + f" -- {licence}", rule]
    for path, text in texts:
        parts += [f"--- {path} ---", text.rstrip(), ""]
    return "\n".join(parts) + "\n"


def write_notices(path: Path, sources, version: str) -> list[str]:
    """Write the notices for a bundle built from ``sources`` (source file paths); return the listed names."""
    normalised = {os.path.normcase(os.path.realpath(s)) for s in sources if s}
    dists = bundled_distributions(normalised)
    Path(path).write_text(notices_text(dists, version), encoding="utf-8")
    return [d.metadata["Name"] for d in dists]


def _preview(out: str) -> int:
    """Notices for every importable top-level package of the environment (no bundle needed)."""
    sources = set()
    for dist in metadata.distributions():
        sources.update(str(f.locate()) for f in dist.files or [])
    names = write_notices(Path(out), sources, "(preview)")
    print(f"{out}: {len(names)} distributions")
    return 0


if __name__ == "__main__":
    sys.exit(_preview(sys.argv[1] if len(sys.argv) > 1 else "THIRD_PARTY_LICENSES.preview"))
