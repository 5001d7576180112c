"""When a synchronous request must have its answer, on the two clocks that judge it.

The front waits on its monotonic clock; the credit's hold carries the same
moment on the wall clock (`wall`), where the database judges a worker's
late consume and the sweep finds holds nobody settled.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from shared.db.base import utcnow


@dataclass(frozen=True, slots=True)
class Deadline:
    seconds: float
    monotonic: float
    wall: datetime

    @classmethod
    def after(cls, seconds: float) -> "Deadline":
        return cls(seconds, time.monotonic() + seconds, utcnow() + timedelta(seconds=seconds))

    def remaining(self) -> float:
        return max(0.0, self.monotonic - time.monotonic())
