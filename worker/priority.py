"""Bulk work at idle CPU priority, so interactive work on the same machine goes first.

Linux's SCHED_IDLE policy runs a thread only on CPU time nothing else wants:
the front, the database and interactive classifications are not slowed by a
bulk chunk. Entering it is always allowed; leaving it is not for every
process (it needs CAP_SYS_NICE, or an RLIMIT_NICE of at least 20), and a
pool process stuck at idle priority would slow its interactive tasks too. So
the policy is used only where the way back is open.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
from pathlib import Path
from typing import Iterator

CAP_SYS_NICE = 23
# RLIMIT_NICE is 20 minus the nice value it lets a process go back to; nice 0 needs 20.
RLIMIT_NICE_FOR_NORMAL = 20


@contextlib.contextmanager
def idle_priority() -> Iterator[None]:
    """Run the block under SCHED_IDLE where the thread can return to normal after."""
    if not can_leave_idle():
        yield
        return
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    try:
        yield
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


@functools.cache
def can_leave_idle() -> bool:
    if not hasattr(os, "SCHED_IDLE"):
        return False
    soft, _ = resource.getrlimit(resource.RLIMIT_NICE)
    if soft == resource.RLIM_INFINITY or soft >= RLIMIT_NICE_FOR_NORMAL:
        return True
    return _has_capability(CAP_SYS_NICE)


def _has_capability(bit: int) -> bool:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> bit & 1)
    return False
