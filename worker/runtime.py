"""What a worker process holds: settings, database, the loaded classifier, the reply channel."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from shared.classification.service import Classifier, build_classifier
from shared.db.session import Database
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
            classifier=build_classifier(settings),
            replies=replies or make_replies(settings.shared_redis_url),
        )


_current: WorkerRuntime | None = None
_lock = threading.Lock()


def install(runtime: WorkerRuntime) -> None:
    """Use this runtime in this process (the embedded mode builds its own)."""
    global _current
    _current = runtime


def current() -> WorkerRuntime:
    """The process's runtime, built from the environment on first use."""
    global _current
    with _lock:
        if _current is None:
            _current = WorkerRuntime.build(Settings.from_environ())
        return _current
