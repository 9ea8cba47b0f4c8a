"""The README's set-up section and .ci/run agree on the system libraries the GUI needs (issue 14, item 11)."""

import re

from tests.conftest import ROOT


def test_readme_names_the_qt_system_libraries_ci_installs():
    ci = (ROOT / ".ci" / "run").read_text()
    listed = re.search(r'QT_SYSTEM_LIBS="([^"]*)"', ci).group(1).split()
    readme = (ROOT / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if "apt-get install" in ln and "libxcb-cursor0" in ln)
    assert line.split("--no-install-recommends", 1)[1].split() == listed
    assert {"libxcb-cursor0", "libxkbcommon-x11-0", "libegl1", "libfontconfig1"} <= set(listed)
