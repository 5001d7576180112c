"""Periodic work and its intervals: the one schedule of `taxonomist beat` and of the embedded timer.

Only names and intervals live here, so that building the Celery app (in the
front too) does not import the work itself.
"""

from __future__ import annotations

from shared.settings import Settings

REFUND_STALE_TASK = "taxonomist.credits.refund_stale"
SWEEP_JOBS_TASK = "taxonomist.jobs.sweep"


def periodic_intervals(settings: Settings) -> dict[str, float]:
    """Seconds between two runs of each periodic task; an interval of 0 turns its task off."""
    intervals = {
        REFUND_STALE_TASK: settings.reservation_sweep_interval_seconds,
        SWEEP_JOBS_TASK: settings.job_sweep_interval_seconds,
    }
    return {name: float(seconds) for name, seconds in intervals.items() if seconds > 0}


def beat_schedule(settings: Settings) -> dict[str, dict]:
    return {
        name: {
            "task": name,
            "schedule": interval,
            # A run still queued when the next is due is dropped: busy
            # workers never find a pile of identical sweeps.
            "options": {"expires": interval},
        }
        for name, interval in periodic_intervals(settings).items()
    }
