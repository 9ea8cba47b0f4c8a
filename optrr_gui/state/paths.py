"""Where the bundled resources live (works from a source checkout and from a PyInstaller bundle)."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    """``resources/`` next to the packages, or inside a frozen bundle's ``_MEIPASS``."""
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


SAMPLE_DIR = resources_dir() / "sample"
#: Opened when ``optrr-gui`` is started without a file.
DEFAULT_SAMPLE = SAMPLE_DIR / "breast_cancer.csv"
SAMPLES = (SAMPLE_DIR / "breast_cancer.csv", SAMPLE_DIR / "heart_cleveland.csv")
ATTRIBUTION = SAMPLE_DIR / "ATTRIBUTION.md"

#: Extension of project files (JSON).
PROJECT_SUFFIX = ".optrr"
#: File dialog filter of the data formats the data path reads.
DATA_FILTER = (
    "Data files (*.csv *.tsv *.txt *.xlsx *.xls *.parquet *.sav *.dta *.sas7bdat);;"
    "CSV / text (*.csv *.tsv *.txt);;Excel (*.xlsx *.xls);;Parquet (*.parquet);;"
    "SPSS / Stata / SAS (*.sav *.dta *.sas7bdat);;All files (*)"
)
PROJECT_FILTER = f"OptRR projects (*{PROJECT_SUFFIX});;All files (*)"
