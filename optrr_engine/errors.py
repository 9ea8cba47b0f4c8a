"""Exceptions with messages meant for the user (one line, says what to fix)."""


class OptRRError(Exception):
    """Base class of every error the engine raises on purpose."""


class InputError(OptRRError, ValueError):
    """The caller's input is invalid (bad size, epsilon, file, configuration...)."""


class InfeasibleError(OptRRError):
    """A design cannot reach the requested per-attribute epsilons."""


class TooLargeError(InputError):
    """The request exceeds what a method or representation can handle (k, domain size)."""


class Cancelled(OptRRError):
    """Raised inside long work when the caller's cancel check returns True."""
