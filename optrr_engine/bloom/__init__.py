"""Bloom-filter LDP (LOPUB / LOCOP / BRR; Ren et al. 2018, Wang et al. 2022, Hernandez-Matamoros & Kikuchi 2024).

Client side: each attribute value is inserted into a Bloom filter of m_j bits with h hash functions
(:mod:`.encoding`), every bit is kept / set to 1 / set to 0 with probabilities 1 - f, f/2, f/2
(:mod:`.perturb`), the bit vectors are concatenated. :mod:`.privacy` states the paper's epsilon and the
epsilon of the mechanism itself. Server side: :mod:`.estimators` (LASSO, LOPUB = LASSO + EM, LOCOP, BRR).
"""

from .encoding import DEFAULT_FALSE_POSITIVE, DEFAULT_HASHES, BloomEncoding, bloom_filters, bloom_length
from .mechanism import BloomMechanism
from .perturb import flip_probability, perturb_bits
from .privacy import stated_attribute_epsilon, true_attribute_epsilon

__all__ = [
    "DEFAULT_FALSE_POSITIVE",
    "DEFAULT_HASHES",
    "BloomEncoding",
    "BloomMechanism",
    "bloom_filters",
    "bloom_length",
    "flip_probability",
    "perturb_bits",
    "stated_attribute_epsilon",
    "true_attribute_epsilon",
]
