"""etcompare.Error: what every failure of the library raises."""
import errno as _errno
import os as _os


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

    def __str__(self):
        # the library's message, also for the OSError subclasses (whose own
        # __str__ would print "[Errno 2] ..." instead)
        return self.message


class _OSLike(Error):
    """Sets OSError's errno, strerror and filename as open() does, so that
    `e.errno == errno.ENOENT` and `e.filename` work as on upstream's
    exception."""
    _errno = 0

    def __init__(self, message, status="error", file="", offset=-1):
        super().__init__(message, status, file, offset)
        self.errno = self._errno
        self.strerror = _os.strerror(self._errno)
        self.filename = file or None


class NotFoundError(_OSLike, FileNotFoundError):
    """A file that does not exist: upstream raises FileNotFoundError (from
    open()), with errno ENOENT, strerror and filename set."""
    _errno = _errno.ENOENT


class DirectoryError(_OSLike, IsADirectoryError):
    """A directory given as a file: upstream's open() raises the builtin
    IsADirectoryError (errno EISDIR), which this subclasses."""
    _errno = _errno.EISDIR


class MismatchError(Error, RuntimeError):
    """Inputs that do not fit together (an ETRecord and an ETDump of
    different programs, time scales, ...): upstream raises RuntimeError."""


def error_for(message, status="error", file="", offset=-1):
    """The etcompare.Error subclass upstream's exception class maps to."""
    if status == "I/O error" and ("No such file" in message or "not found" in message):
        cls = NotFoundError
    elif status == "I/O error" and "is a directory" in message:
        cls = DirectoryError
    elif status == "mismatch":
        cls = MismatchError
    else:
        cls = Error
    return cls(message, status, file, offset)
