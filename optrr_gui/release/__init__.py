"""The release dialog: perturb the file with the chosen design and write the release, manifest and report."""
