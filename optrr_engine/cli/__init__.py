"""The ``optrr`` command line over the engine."""
