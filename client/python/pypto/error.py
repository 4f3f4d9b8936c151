"""pypto.error: PyPTO's exception classes (FeError, PassError, ...).

PyPTO raises FeError for bad front-end input and PassError for bad pass
configuration, each wrapping a built-in error: FeError(ValueError("...")).
Here each class is also a TypeError and a ValueError, so a program that
catches either built-in (as pypto's own errors are) catches these too. The
message starts with PyPTO's error code: "ErrCode: F00002, ValueError: ...".
"""

_ERROR_CODE_UNKNOWN = 0xF0FFFF
_ERROR_CODES = {
    TypeError: 0xF00001,
    ValueError: 0xF00002,
    RuntimeError: 0xF00003,
    NameError: 0xF00004,
    NotImplementedError: 0xF00005,
}


def _err_code(cause):
    return _ERROR_CODES.get(type(cause), _ERROR_CODE_UNKNOWN)


class PyptoError(Exception):
    """Base of PyPTO's errors: PyptoError(err_code, message_or_exception)."""

    def __init__(self, err_code, msg):
        if isinstance(msg, BaseException):
            text = f"ErrCode: {err_code:X}, {type(msg).__name__}: {msg}"
        else:
            text = str(msg) if "ErrCode" in str(msg) else f"ErrCode: {err_code:X}, {msg}"
        super().__init__(text)
        self.err_code = err_code
        self.cause = msg if isinstance(msg, BaseException) else None
        self.node = None


class PyptoGeneralError(PyptoError, TypeError, ValueError):
    """PyptoGeneralError(message_or_exception): the code follows the wrapped
    exception's type (TypeError F00001, ValueError F00002, ...)."""

    def __init__(self, msg):
        code = _err_code(msg) if isinstance(msg, BaseException) else _ERROR_CODE_UNKNOWN
        super().__init__(code, msg)


class FeError(PyptoGeneralError):
    """Bad input to the front end (an option, a tile shape, an Element)."""


class PassError(PyptoGeneralError):
    """Bad pass configuration (pypto.set_pass_config and friends)."""


class VerifyError(PyptoGeneralError):
    """A pass-verification tool used wrongly."""


class PyptoRtError(PyptoGeneralError):
    """A run-time failure."""


class ParserError(PyptoError, TypeError, ValueError):
    """ParserError(node, message_or_exception): an error at an AST node."""

    def __init__(self, node, msg):
        code = _err_code(msg) if isinstance(msg, BaseException) else _ERROR_CODE_UNKNOWN
        super().__init__(code, msg)
        self.node = node


class RenderedParserError(ParserError):
    """A ParserError whose message is already rendered with its source."""
