"""Analysis of estimated tables and the Domingo-Ferrer & Soria-Comas protocols.

Contingency tables, chi-square tests (the paper's 2x2 allele-by-status statistic, Pearson r x c, and a
Wald test that accounts for the randomization), AVD, R-squared and AAR, count-query errors, attribute dependence,
RR-Clusters (Algorithm 1), RR-Adjustment (Algorithm 2), RR-Independent and RR-Joint.
"""

from .avd import avd
from .chi_square import Chi2Result, chi2_2x2, pearson_chi2, wald_independence
from .contingency import conditional_shares, contingency_table, expected_under_independence, table_from_estimate
from .count_queries import query_errors, random_query
from .dependence import abs_pearson, cramers_v, dependence_matrix
from .joint_metrics import aar, r_squared
from .rr_adjustment import Adjustment, rr_adjustment
from .rr_clusters import Clustering, ClusterPlan, cluster_attributes, cluster_mechanism, plan_rr_clusters
from .rr_protocols import cluster_product, product_distribution, rr_independent_mechanism, rr_joint_mechanism

__all__ = [
    "Adjustment",
    "Chi2Result",
    "ClusterPlan",
    "Clustering",
    "aar",
    "abs_pearson",
    "avd",
    "chi2_2x2",
    "cluster_attributes",
    "cluster_mechanism",
    "cluster_product",
    "conditional_shares",
    "contingency_table",
    "cramers_v",
    "dependence_matrix",
    "expected_under_independence",
    "pearson_chi2",
    "plan_rr_clusters",
    "product_distribution",
    "query_errors",
    "r_squared",
    "random_query",
    "rr_adjustment",
    "rr_independent_mechanism",
    "rr_joint_mechanism",
    "table_from_estimate",
    "wald_independence",
]
