"""quire.Error and its subclasses: one per family of quire_status codes."""


class Error(Exception):
    """A quire library error. Fields mirror quire_error (include/quire.h):

    code     the stable status name, e.g. "QUIRE_E_REMINDER_TTL"
    status   the numeric quire_status
    offset   byte offset in the failing input, or None
    line     1-based line of offset (0 when unknown)
    column   1-based column in bytes (0 when unknown)
    pointer  JSON Pointer of the offending value, or None
    field    the offending field name, or None
    message  what is wrong, one line
    """

    def __init__(self, status, code, offset, line, column, pointer, field, message):
        self.status = status
        self.code = code
        self.offset = offset
        self.line = line
        self.column = column
        self.pointer = pointer
        self.field = field
        self.message = message
        where = ""
        if line:
            where = "%d:%d: " % (line, column)
        if pointer:
            where += pointer + ": "
        super().__init__("%s%s (%s)" % (where, message, code))

    def __reduce__(self):
        return (type(self), (self.status, self.code, self.offset, self.line, self.column,
                             self.pointer, self.field, self.message))


class JSONError(Error):
    """QUIRE_E_JSON: the input is not JSON."""


class LimitError(Error):
    """QUIRE_E_LIMIT: a configured limit was exceeded."""


class SchemaError(Error):
    """QUIRE_E_SCHEMA: valid JSON, wrong shape for a quire format."""


class UnsupportedError(Error):
    """QUIRE_E_UNSUPPORTED: cannot be expressed for the target."""


class ReminderError(Error):
    """QUIRE_E_REMINDER_*: a reminder breaks a rule (see .field)."""


class InvalidError(Error, ValueError):
    """QUIRE_E_INVALID: an argument or option is invalid."""


class BudgetError(Error):
    """QUIRE_E_BUDGET: the compaction budget cannot be met."""


class SessionError(Error):
    """QUIRE_E_SESSION: a session or session-log event is malformed or out of order."""


class MismatchError(Error):
    """QUIRE_E_MISMATCH: replay output differs from the expected one."""


class ValidationError(Error):
    """QUIRE_E_VALIDATE: a request violates its dialect's rules."""


_BY_CODE = {
    "QUIRE_E_JSON": JSONError,
    "QUIRE_E_LIMIT": LimitError,
    "QUIRE_E_SCHEMA": SchemaError,
    "QUIRE_E_UNSUPPORTED": UnsupportedError,
    "QUIRE_E_INVALID": InvalidError,
    "QUIRE_E_BUDGET": BudgetError,
    "QUIRE_E_SESSION": SessionError,
    "QUIRE_E_MISMATCH": MismatchError,
    "QUIRE_E_VALIDATE": ValidationError,
}


def make_error(status, code, offset, line, column, pointer, field, message):
    """The factory the extension calls to build the exception for a failed call."""
    cls = _BY_CODE.get(code)
    if cls is None:
        cls = ReminderError if code.startswith("QUIRE_E_REMINDER_") else Error
    return cls(status, code, offset, line, column, pointer, field, message)
