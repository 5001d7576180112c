"""Credit errors.

    CreditError
    ├── InsufficientCredits     monthly and top-up credits both exhausted (HTTP 403)
    └── ReservationNotFound
"""


class CreditError(Exception):
    """Base class for credit errors."""


class InsufficientCredits(CreditError):
    pass


class ReservationNotFound(CreditError):
    pass
