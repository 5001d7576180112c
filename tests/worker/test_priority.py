"""Bulk work at idle priority only where a thread can come back from it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from worker.priority import can_leave_idle, idle_priority

PROBE = "from worker.priority import can_leave_idle; print(can_leave_idle())"


def test_the_block_runs_idle_and_the_thread_comes_back():
    if not can_leave_idle():
        pytest.skip("this process may not leave SCHED_IDLE")
    with idle_priority():
        assert os.sched_getscheduler(0) == os.SCHED_IDLE
    assert os.sched_getscheduler(0) == os.SCHED_OTHER


@pytest.mark.skipif(shutil.which("setpriv") is None or os.geteuid() != 0, reason="needs root and setpriv")
def test_without_cap_sys_nice_bulk_work_keeps_the_normal_policy():
    dropped = subprocess.run(
        ["setpriv", "--inh-caps=-sys_nice", "--bounding-set=-sys_nice", sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dropped.stdout.strip() == "False", dropped.stderr
    kept = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert kept.stdout.strip() == "True", kept.stderr
