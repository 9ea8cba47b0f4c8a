"""The comparison harness: plain data (DataFrames) for the GUI's plots, plus CSV/PNG writers.

(a) :func:`ratio_curves` - Yamamoto & Shibuya Figs. 1-4;
(b) :func:`snp_chi2_curve` - their Fig. 5 (chi-square error vs number of SNPs, raw and unbiased);
(c) :func:`count_query_errors` - Domingo-Ferrer & Soria-Comas Fig. 3 (relative error vs coverage);
(d) :func:`avd_table` - AVD and R-squared of 2- to 5-way marginals at one epsilon, for every design and the
    Bloom-filter schemes (LOPUB, LOCOP, BRR); :func:`avd_sweep` - the same over epsilons on both privacy axes.
"""

from .avd_marginals import avd_sweep, avd_table
from .count_queries import count_query_errors
from .datasets import CategoricalData, load_dataset, prepare_frame, rules_text
from .ratios import ratio_curves
from .snp_chi2 import snp_chi2_curve
from .snp_chi2 import summarize as summarize_snp

__all__ = [
    "CategoricalData",
    "avd_sweep",
    "avd_table",
    "count_query_errors",
    "load_dataset",
    "prepare_frame",
    "ratio_curves",
    "rules_text",
    "snp_chi2_curve",
    "summarize_snp",
]
