"""The Analyse tab: the receiver's side, estimating distributions and tests from a release."""
