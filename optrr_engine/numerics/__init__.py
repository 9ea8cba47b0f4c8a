"""Small numerical routines the engine needs at run time, written here so that the shipped program does not
carry scipy (66 MB of the standalone bundle for four functions). Each is checked against scipy in the tests.

- :mod:`.special`: log-factorials / binomial coefficients and the chi-square survival function;
- :mod:`.minimize`: golden-section search on an interval and Nelder-Mead for a few variables.
"""
