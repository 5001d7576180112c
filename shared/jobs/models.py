"""A bulk job and its items.

The job row is the unit of locking: every transaction that changes its items
locks it first, so the counters always agree with the items' statuses.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import fields
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from shared.classification.models import ClassificationRequest
from shared.db.base import Base, UTCDateTime, utcnow

JOB_QUEUED = "queued"
JOB_RUNNING = "running"
JOB_COMPLETED = "completed"
JOB_CANCELLING = "cancelling"
JOB_CANCELLED = "cancelled"
JOB_FAILED = "failed"
ACTIVE_JOB_STATUSES = (JOB_QUEUED, JOB_RUNNING, JOB_CANCELLING)

ITEM_QUEUED = "queued"
ITEM_RUNNING = "running"
ITEM_DONE = "done"
ITEM_FAILED = "failed"
ITEM_CANCELLED = "cancelled"
ENDED_ITEM_STATUSES = (ITEM_DONE, ITEM_FAILED, ITEM_CANCELLED)

MAX_ITEM_ID_LENGTH = 200
MAX_IDEMPOTENCY_KEY_LENGTH = 200
JOB_ID_PREFIX = "job_"
_JOB_ID = re.compile(JOB_ID_PREFIX + "[0-9a-f]{32}")


def new_job_id() -> str:
    return JOB_ID_PREFIX + uuid.uuid4().hex


def is_job_id(value: str) -> bool:
    """Whether `value` could be a job id: checked before it reaches a query."""
    return _JOB_ID.fullmatch(value) is not None


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (UniqueConstraint("account_id", "idempotency_key"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(MAX_IDEMPOTENCY_KEY_LENGTH))
    status: Mapped[str] = mapped_column(String(16), index=True)
    total: Mapped[int] = mapped_column(Integer)
    done: Mapped[int] = mapped_column(Integer, default=0)
    found: Mapped[int] = mapped_column(Integer, default=0)
    not_found: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    cancelled: Mapped[int] = mapped_column(Integer, default=0)
    # The credits held at submission, one per item.
    hold_id: Mapped[str] = mapped_column(ForeignKey("credit_holds.id"))
    chunk_size: Mapped[int] = mapped_column(Integer)
    # Chunks below this index have been sent to the queue at least once.
    next_chunk: Mapped[int] = mapped_column(Integer, default=0)
    # Names of the input's extra CSV columns / item fields, echoed in the results (JSON list).
    extra_columns: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    # Set at submission: items the upstream AI still refuses after it fail instead of waiting.
    deadline_at: Mapped[datetime] = mapped_column(UTCDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None, index=True)
    # Last time any of its items moved: the sweep looks for jobs that stopped moving.
    progressed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    @property
    def chunk_count(self) -> int:
        return -(-self.total // self.chunk_size)

    @property
    def ended_items(self) -> int:
        return self.done + self.failed + self.cancelled

    @property
    def refunded(self) -> int:
        return self.failed + self.cancelled


class JobItem(Base):
    __tablename__ = "job_items"

    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), primary_key=True)
    # 0-based rank in the input; chunk n holds positions [n * chunk_size, (n + 1) * chunk_size).
    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    item_id: Mapped[str] = mapped_column(String(MAX_ITEM_ID_LENGTH))
    product: Mapped[str] = mapped_column(Text)
    taxonomy: Mapped[str] = mapped_column(String(16))
    custom_instructions: Mapped[str | None] = mapped_column(Text, default=None)
    leafs_only: Mapped[bool] = mapped_column(Boolean)
    fallback_to_best_guess: Mapped[bool] = mapped_column(Boolean)
    # Position of the first item with the same text and options: its answer is reused.
    duplicate_of: Mapped[int | None] = mapped_column(Integer, default=None)
    extra: Mapped[str | None] = mapped_column(Text, default=None)
    status: Mapped[str] = mapped_column(String(16))
    # The Celery task that claimed the item: a redelivery of that task may claim it again.
    claimed_by: Mapped[str | None] = mapped_column(String(64), default=None)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # The response fields of the synchronous endpoint (JSON), or {success: false, error}.
    result: Mapped[str | None] = mapped_column(Text, default=None)


# An item stores its request in columns named as the request's fields.
REQUEST_COLUMNS = tuple(field.name for field in fields(ClassificationRequest))


def item_columns(request: ClassificationRequest) -> dict[str, Any]:
    """The item's columns that hold `request`."""
    return {name: getattr(request, name) for name in REQUEST_COLUMNS}


def request_of(row: Any) -> ClassificationRequest:
    """The request stored in an item's columns (a JobItem or a row selecting them)."""
    return ClassificationRequest(**{name: getattr(row, name) for name in REQUEST_COLUMNS})
