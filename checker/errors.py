"""The exit statuses of `kata`, the error that ends a command with status 2, and the errors both sides of the
sandbox raise (the child's stand-ins raise Said at the user's code; the parent raises UserError, Timeout, Crashed).

At the bottom of the package: it imports nothing of kata's, so any module may raise them.
"""

from dataclasses import dataclass

EXIT_OK, EXIT_NOT_PASSED, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    """Bad input from the user: exit status 2 with this message."""


class RegistryError(UsageError):
    """A registry kata reads (checker/catalogue.toml, a kata's zh.toml) holds a key it does not know: exit status 2,
    the key named with the keys it may have meant."""


# ----------------------------------------------------------------------------- the sandbox's


def message_of(err: BaseException):
    """What an error says, kept as the message it was made with when it is one of kata's own (a checker.lang.Message,
    drawn where it is shown, in the reader's language); the text of any other."""
    return err.args[0] if len(err.args) == 1 and hasattr(type(err.args[0]), "said") else str(err)


class Timeout(Exception):
    """The user's code did not answer within the time limit."""


class Crashed(Exception):
    """The child process died (segfault, os._exit, killed)."""


@dataclass
class UserError(Exception):
    """The user's code raised: what, where (their own frames), and whether it is an unwritten stub."""

    kind: str
    message: str
    traceback: str
    not_implemented: bool = False
    case: object = None  # the kit's Case the call ran on, when the kit knows it (for the diagnosis)
    call: object = None  # (arguments, how): the kit's call that raised, where the reference can be called alike

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}" if self.message else self.kind

    def __reduce__(self):  # a dataclass exception has no args to be rebuilt from: a result crosses -j's pipes
        return (type(self), (self.kind, self.message, self.traceback, self.not_implemented))  # not the kit's Case

    def reason(self) -> tuple:
        """What the folding of failures (checker.lang.reason) counts of it: its type, not its numbers."""
        return ("error", self.kind)

    @property
    def text(self) -> str:
        """The error's text as the user's code raised it, for a check to read (torch's "must match the size of
        tensor b"); empty when the message is kata's own sentence (a checker.lang.Message: the memory limit, a
        stand-in model's refusal), which is drawn for the reader and never read back."""
        return self.message if isinstance(self.message, str) else ""

    def said(self, lang: str) -> str:
        """As str(), its message in lang when it is one of kata's own (a Said error of its stand-in models: a
        checker.lang.Message, which draws itself)."""
        message = self.message.said(lang) if hasattr(self.message, "said") else self.message
        return f"{self.kind}: {message}" if message else self.kind


class Said(ValueError):
    """A ValueError that kata's own stand-ins raise at the user's code (a model called the wrong way, or too often).
    The child sends its English and values with it; the checker says it in the reader's language (checker/zh.toml)."""

    def __init__(self, english: str, **values):
        super().__init__(english.format(**values))
        self.english, self.values = english, values


class ReturnedOther(Exception):
    """Not an error of the user's code: it returned fewer float outputs than the gradient check follows (expected,
    got). The checker says so in the reader's language (returned_other)."""
