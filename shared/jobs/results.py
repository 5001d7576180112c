"""A job's results as the API gives them: JSON objects, JSON Lines, CSV.

Each result is the item's id, its extra input columns (under `columns` in
JSON), and the response fields of the synchronous endpoint.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Iterable, Iterator

from shared.jobs.models import ITEM_CANCELLED, Job, JobItem

CANCELLED_ERROR = "Cancelled before it was classified."
RESPONSE_COLUMNS = (
    "success",
    "categoryFound",
    "categoryId",
    "categoryPath",
    "categoryLine",
    "categoryTags",
    "confidenceLevel",
    "error",
)


def extra_columns(job: Job) -> list[str]:
    return json.loads(job.extra_columns) if job.extra_columns else []


def result_object(item: JobItem) -> dict:
    if item.status == ITEM_CANCELLED:
        body = {"success": False, "error": CANCELLED_ERROR}
    else:
        assert item.result is not None  # every ended item but a cancelled one has its answer
        body = json.loads(item.result)
    extra = {"columns": json.loads(item.extra)} if item.extra else {}
    return {"id": item.item_id, **extra, **body}


def jsonl_lines(items: Iterable[JobItem]) -> Iterator[str]:
    for item in items:
        yield json.dumps(result_object(item)) + "\n"


def csv_lines(items: Iterable[JobItem], columns: list[str]) -> Iterator[str]:
    """CSV text, one row per line: the header, then each result."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(row: list) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(row)
        return buffer.getvalue()

    yield line(["id", *columns, *RESPONSE_COLUMNS])
    for item in items:
        result = result_object(item)
        given = result.get("columns", {})
        tags = result.get("categoryTags")
        result["categoryTags"] = " > ".join(tags) if tags else ""
        yield line(
            [item.item_id, *(given.get(name, "") for name in columns)]
            + [_cell(result.get(name)) for name in RESPONSE_COLUMNS]
        )


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
