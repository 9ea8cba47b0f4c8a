"""OptRR engine: pattern-structured randomized-response mechanisms, designs, perturbation, estimation.

This package never imports Qt. Heavy modules (pandas, pyarrow, scipy) are imported lazily inside the functions that
need them so that the command line starts fast.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
