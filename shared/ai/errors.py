"""Failures of the upstream AI, as callers need to tell them apart.

    AIError
    ├── AIRateLimited     the upstream (or our own bucket for it) says wait
    └── AIUnavailable     timeouts, connection errors, 5xx after the last retry

An answer that is not valid is not an error: it is a Decision with no category.
"""


class AIError(Exception):
    """Base class for upstream AI failures."""


class AIRateLimited(AIError):
    def __init__(self, retry_after: float, message: str = "upstream AI rate limit") -> None:
        super().__init__(message)
        self.retry_after = retry_after


class AIUnavailable(AIError):
    """The upstream AI could not answer after the retries allowed."""
