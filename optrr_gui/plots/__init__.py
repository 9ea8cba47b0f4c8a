"""Drawing figures with pyqtgraph (also offscreen, for the CLI's PNG figures in the bundle)."""
