"""etcompare.Error: what every failure of the library raises."""


class Error(ValueError):
    """A failure reported by libetcompare: `message` names the file, the byte
    offset and the field; `status` is the library's status name, `file` and
    `offset` where the problem is (offset -1 when none)."""

    def __init__(self, message, status="error", file="", offset=-1):
        super().__init__(message)
        self.message = message
        self.status = status
        self.file = file
        self.offset = offset


class NotFoundError(Error, FileNotFoundError):
    """A file that does not exist: upstream raises FileNotFoundError."""


class MismatchError(Error, RuntimeError):
    """Inputs that do not fit together (an ETRecord and an ETDump of
    different programs, time scales, ...): upstream raises RuntimeError."""


def error_for(message, status="error", file="", offset=-1):
    """The etcompare.Error subclass upstream's exception class maps to."""
    if status == "I/O error" and ("No such file" in message or "not found" in message):
        cls = NotFoundError
    elif status == "mismatch":
        cls = MismatchError
    else:
        cls = Error
    return cls(message, status, file, offset)
