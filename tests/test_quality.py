"""Code quality gates that CI runs with the tests: ruff and the import contracts (Qt-free engine and GUI state,
the engine's layers)."""

import re
import shutil
import subprocess
import sys

from tests.conftest import ROOT


def test_ruff_clean():
    ruff = shutil.which("ruff")
    cmd = [ruff, "check", str(ROOT)] if ruff else [sys.executable, "-m", "ruff", "check", str(ROOT)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def contract_names() -> list[str]:
    """The names of the import-linter contracts declared in pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text[text.index("[tool.importlinter]") :]
    return re.findall(r'^name = "(.+)"$', section, flags=re.M)


def test_every_import_contract_is_kept():
    exe = shutil.which("lint-imports")
    assert exe, "import-linter is part of the test extras"
    proc = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flat = " ".join(proc.stdout.split())
    names = contract_names()
    assert "The engine never imports Qt or the GUI" in names
    assert any("Qt-free" in n and "GUI" in n for n in names), "the GUI's Qt-free contract is declared"
    assert any(n.startswith("The engine's layers") for n in names), "the engine's layers contract is declared"
    for name in names:
        assert f"{name} KEPT" in flat, name


def test_engine_imports_without_qt_in_a_fresh_interpreter():
    code = (
        "import sys, optrr_engine.designs, optrr_engine.mechanism, optrr_engine.cli.main;"
        "bad=[m for m in sys.modules if m.startswith(('PySide6','pyqtgraph','shiboken6'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_finds_no_type_error_in_the_engine():
    """mypy over optrr_engine with the configuration in pyproject.toml ([tool.mypy])."""
    proc = subprocess.run([sys.executable, "-m", "mypy"], capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
