"""Frozen entry point of the ``optrr-gui`` windowed program (same as the ``optrr-gui`` GUI script)."""
# (Not named like a package: a script called optrr_gui.py would shadow the optrr_gui package.)

import os
import sys

if __name__ == "__main__":
    if os.environ.get("OPTRR_BUNDLE_SELF_TEST") == "1":
        from bundle_self_test import run

        sys.exit(run(gui=True))
    from optrr_gui.app import main

    sys.exit(main())
