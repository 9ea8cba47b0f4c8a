"""OptRR desktop application (PySide6 + pyqtgraph) over :mod:`optrr_engine`."""
