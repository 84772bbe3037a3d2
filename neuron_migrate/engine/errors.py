"""Errors that name the rule they came from."""


class RuleError(Exception):
    """A rule's condition or edit failed on one file: an internal error, not bad input."""

    def __init__(self, code: str, original: BaseException):
        super().__init__(f"{type(original).__name__}: {original}")
        self.code = code
        self.original = original
