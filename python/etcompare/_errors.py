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
