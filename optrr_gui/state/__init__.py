"""Qt-free state of the window: the session (columns, roles, epsilons, method) and its project files, the
bridge to the engine's release configuration, design summaries, the rows read from the data file and the
resource paths. Nothing here imports Qt (an import-linter contract in pyproject.toml)."""
