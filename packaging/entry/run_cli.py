"""Frozen entry point of the ``optrr`` console program (same as the ``optrr`` console script)."""

import os
import sys

if __name__ == "__main__":
    if os.environ.get("OPTRR_BUNDLE_SELF_TEST") == "1":
        from bundle_self_test import run

        sys.exit(run(gui=False))
    from optrr_engine.cli.main import main

    sys.exit(main())
