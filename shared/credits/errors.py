"""Credit errors.

    CreditError
    ├── InsufficientCredits     monthly and top-up credits both exhausted (HTTP 403)
    └── HoldNotFound
"""


class CreditError(Exception):
    """Base class for credit errors."""


class InsufficientCredits(CreditError):
    pass


class HoldNotFound(CreditError):
    pass
