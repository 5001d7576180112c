"""Account and key errors.

    AccountError
    ├── AccountNotFound
    ├── AccountExists
    ├── KeyLimitReached     the account already has its maximum of active keys
    ├── KeyNotFound
    └── InvalidApiKey       missing, malformed, unknown or deleted key (HTTP 401)
"""


class AccountError(Exception):
    """Base class for account and key errors."""


class AccountNotFound(AccountError):
    pass


class AccountExists(AccountError):
    pass


class KeyLimitReached(AccountError):
    pass


class KeyNotFound(AccountError):
    pass


class InvalidApiKey(AccountError):
    pass
