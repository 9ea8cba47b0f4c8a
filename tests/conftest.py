import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "tests" / "data"  # real public datasets (see tests/data/ATTRIBUTION.md)
SAMPLE_DIR = ROOT / "resources" / "sample"


import gc  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _collect_cycles_on_the_main_thread():
    """Once a GUI test has disabled automatic collection (optrr_gui.workers.gc_guard), collect after each test here,
    on the main thread, so garbage never piles up for a worker thread to meet."""
    yield
    if not gc.isenabled():
        threshold = gc.get_threshold()
        count = gc.get_count()
        for generation in range(3):
            if count[generation] > threshold[generation]:
                gc.collect(generation)
