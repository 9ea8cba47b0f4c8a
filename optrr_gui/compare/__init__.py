"""The Compare tab: the figures comparing the designs."""
