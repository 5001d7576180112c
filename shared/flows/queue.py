"""The tasks the use cases put on the queue, sent by name.

A sender needs a task's name and queue, not the code that runs it: the front
sends classifications without importing the classifier and its ML stack.
"""

from __future__ import annotations

from typing import Any, Protocol

from shared.jobs.state import Chunk

CLASSIFY_TASK = "taxonomist.classify"
RUN_CHUNK_TASK = "taxonomist.jobs.run_chunk"
INTERACTIVE_QUEUE = "interactive"
BULK_QUEUE = "bulk"


class TaskSender(Protocol):
    """What sends a task by name: a Celery application."""

    def send_task(self, name: str, args: Any = None, **options: Any) -> Any: ...


def send_chunks(sender: TaskSender, chunks: list[Chunk]) -> None:
    for chunk in chunks:
        sender.send_task(
            RUN_CHUNK_TASK,
            args=(chunk.job_id, chunk.index, chunk.start, chunk.stop),
            queue=BULK_QUEUE,
            argsrepr=chunk.describe(),
        )
