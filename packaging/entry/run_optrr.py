"""Frozen entry point of both programs; the name the executable was started by picks the program.

    optrr-gui[.exe]  ->  optrr_gui.app:main            (the desktop application)
    anything else    ->  optrr_engine.cli.main:main    (the command line)

On Linux the bundle has one executable, ``optrr``, and ``optrr-gui`` is a symbolic link to it (argv[0] keeps the
link's name). The GUI's worker processes and multiprocessing's resource tracker are started as the executable
itself, whatever its name (``--multiprocessing-fork ...``, ``-B -s -c "from multiprocessing..."``), so
multiprocessing's freeze_support looks at the arguments first: it runs such a process and exits, and returns
otherwise (PyInstaller's runtime hook has imported multiprocessing already, so this costs nothing).
``OPTRR_BUNDLE_SELF_TEST=1`` runs the import self-test instead of the program. ``optrr compare`` draws its figures
with the GUI package's renderer, found through OptRR's entry points (the spec bundles the package metadata).
(Not named like a package: a script called optrr_gui.py would shadow the optrr_gui package.)
"""

import os
import sys


def wants_gui(argv0: str) -> bool:
    return os.path.basename(argv0).lower().startswith("optrr-gui")


if __name__ == "__main__":
    import multiprocessing

    multiprocessing.freeze_support()
    gui = wants_gui(sys.argv[0])
    if os.environ.get("OPTRR_BUNDLE_SELF_TEST") == "1":
        from bundle_self_test import run

        sys.exit(run(gui=gui))
    if gui:
        from optrr_gui.app import main
    else:
        from optrr_engine.cli.main import main
    sys.exit(main())
