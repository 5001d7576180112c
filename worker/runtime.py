"""What a worker process holds: settings, database, the loaded classifier, the reply channel."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from shared.classification.service import Classifier, build_classifier
from shared.db.session import Database
from shared.ratelimit.concurrency import make_call_slots
from shared.settings import Settings
from worker.replies import InProcessReplies, RedisReplies, make_replies


@dataclass
class WorkerRuntime:
    settings: Settings
    database: Database
    classifier: Classifier
    replies: RedisReplies | InProcessReplies

    @classmethod
    def build(
        cls, settings: Settings, replies: RedisReplies | InProcessReplies | None = None
    ) -> "WorkerRuntime":
        return cls(
            settings=settings,
            database=Database.of(settings),
            classifier=build_classifier(settings, make_call_slots(settings)),
            replies=replies or make_replies(settings.shared_redis_url, settings.redis_namespace),
        )


_current: WorkerRuntime | None = None
_settings: Settings | None = None
_lock = threading.Lock()


def configure(settings: Settings) -> None:
    """The settings this process's runtime is built from (the worker app's)."""
    global _settings
    _settings = settings


def install(runtime: WorkerRuntime) -> None:
    """Use this runtime in this process (the embedded mode builds its own)."""
    global _current
    _current = runtime


def current() -> WorkerRuntime:
    """The process's runtime, built from the configured settings on first use."""
    global _current
    with _lock:
        if _current is None:
            if _settings is None:
                raise RuntimeError("no worker settings: a worker configures them when it starts")
            _current = WorkerRuntime.build(_settings)
        return _current
