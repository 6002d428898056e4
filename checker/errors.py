"""The exit statuses of `kata` and the error that ends a command with status 2.

At the bottom of the package: it imports nothing of kata's, so any module may raise a UsageError.
"""

EXIT_OK, EXIT_NOT_PASSED, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    """Bad input from the user: exit status 2 with this message."""


class RegistryError(UsageError):
    """A registry kata reads (checker/catalogue.toml, a kata's zh.toml) holds a key it does not know: exit status 2,
    the key named with the keys it may have meant."""
