"""Bulk job errors.

    JobError
    ├── JobNotFound        no such job on this account (HTTP 404, never 403)
    └── InvalidJobInput    the submission breaks a rule (HTTP 400); nothing was queued
"""


class JobError(Exception):
    """Base class for bulk job errors."""


class JobNotFound(JobError):
    pass


class InvalidJobInput(JobError):
    """The message names the first offending lines and what is wrong with them."""
