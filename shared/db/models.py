"""Every table of the service, imported so that migrations see one metadata."""

from shared.accounts.models import Account, ApiKey  # noqa: F401
from shared.credits.models import CreditBalance, CreditHold, LedgerEntry, UsageRecord  # noqa: F401
from shared.jobs.models import Job, JobItem  # noqa: F401
from shared.db.base import Base

metadata = Base.metadata
