"""The Data tab (a lazy table over the rows read in the background) and the import dialog."""
