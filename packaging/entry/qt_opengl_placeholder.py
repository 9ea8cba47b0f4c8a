"""Stand-in for ``PySide6.QtOpenGL`` where a bundle leaves that binding out (Linux: 8.5 MB).

pyqtgraph imports ``PySide6.QtOpenGL`` by name when it is imported (``importlib.import_module`` in
``pyqtgraph/Qt/OpenGLHelpers.py``, ``PlotCurveItem.py``, ``PColorMeshItem.py``, ``RawImageWidget.py``) but
touches its classes only when drawing with OpenGL, which OptRR never switches on. ``install()`` registers this
placeholder only if the real module cannot be imported; any attribute looked up on it raises AttributeError naming
the cause, so a future use of OpenGL fails loudly instead of mysteriously. ``PySide6.QtOpenGLWidgets`` (small, and
subclassed by pyqtgraph at import) stays in the bundle.
"""

import sys
import types

NAME = "PySide6.QtOpenGL"


class QtOpenGLPlaceholder(types.ModuleType):
    def __getattr__(self, attr: str):
        raise AttributeError(
            f"{NAME}.{attr}: Qt's OpenGL binding is not part of this bundle (OptRR never draws with OpenGL)"
        )


def install() -> bool:
    """Register the placeholder if the real binding is missing; True if it was registered."""
    if NAME in sys.modules:
        return isinstance(sys.modules[NAME], QtOpenGLPlaceholder)
    try:
        __import__(NAME)
    except ImportError:
        sys.modules[NAME] = QtOpenGLPlaceholder(NAME, __doc__)
        return True
    return False
