"""Reading a job submission: JSON, JSON Lines or CSV, validated whole before anything is queued.

Every item goes through the synchronous endpoint's validation
(`shared.classification.validation.classification_request_from`), on the job-level options
overlaid by the item's own. Errors are collected, and the first few are
reported by line, so that a caller can fix a file in one round.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Iterator

from shared.classification.messages import TOO_LARGE
from shared.classification.validation import classification_request_from
from shared.classification.models import ClassificationRequest
from shared.jobs.errors import InvalidJobInput
from shared.jobs.models import MAX_ITEM_ID_LENGTH
from shared.validation import InvalidRequest, check_text, parse_json

FORMAT_JSON = "json"
FORMAT_JSONL = "jsonl"
FORMAT_CSV = "csv"
CONTENT_TYPES = {
    "application/json": FORMAT_JSON,
    "application/x-ndjson": FORMAT_JSONL,
    "application/jsonl": FORMAT_JSONL,
    "application/json-lines": FORMAT_JSONL,
    "text/csv": FORMAT_CSV,
}
OPTION_FIELDS = ("taxonomy", "customInstructionsForAi", "leafsOnly", "fallbackToBestGuess")
BOOLEAN_OPTIONS = ("leafsOnly", "fallbackToBestGuess")
ITEM_FIELDS = ("id", "product", *OPTION_FIELDS)
# Enough to fix a file in one go without drowning the caller.
MAX_REPORTED_ERRORS = 10


@dataclass(frozen=True, slots=True)
class ParsedItem:
    item_id: str
    request: ClassificationRequest
    extra: dict | None


@dataclass
class JobInput:
    items: list[ParsedItem] = field(default_factory=list)
    # Extra CSV columns / item fields in first-seen order, echoed in the results.
    extra_columns: list[str] = field(default_factory=list)


def format_of(content_type: str | None) -> str:
    media_type = (content_type or "").split(";")[0].strip().lower()
    if media_type not in CONTENT_TYPES:
        raise InvalidJobInput(
            "Content-Type must be application/json, application/x-ndjson or text/csv."
        )
    return CONTENT_TYPES[media_type]


def parse_job(
    body: bytes, content_type: str | None, query: dict, max_items: int, max_item_bytes: int
) -> JobInput:
    """The whole submission, or InvalidJobInput naming the first bad lines.

    Job-level options come from the JSON object, or for JSON Lines and CSV
    from the query string (same names as the synchronous endpoint's fields).
    An item is at most `max_item_bytes` as the synchronous endpoint's JSON
    body: no larger work reaches a worker through a job than through it.
    """
    kind = format_of(content_type)
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidJobInput("The body must be UTF-8 text.") from exc
    if kind == FORMAT_JSON:
        options, records = _json_records(text)
    else:
        options = _query_options(query)
        records = _jsonl_records(text) if kind == FORMAT_JSONL else _csv_records(text)
    _check_options(options)
    return _validate(records, options, max_items, max_item_bytes)


def _json_records(text: str) -> tuple[dict, Iterator[tuple[str, object]]]:
    try:
        data = parse_json(text)
    except InvalidRequest as exc:
        raise InvalidJobInput(str(exc)) from exc
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise InvalidJobInput("The body must be a JSON object with an 'items' array.")
    options = {name: data[name] for name in OPTION_FIELDS if name in data}
    records = ((f"Item {number}", item) for number, item in enumerate(data["items"], 1))
    return options, records


def _jsonl_records(text: str) -> Iterator[tuple[str, object]]:
    """(where, record), the record an InvalidRequest when the line is not JSON."""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield f"Line {number}", parse_json(line)
        except InvalidRequest as exc:
            yield f"Line {number}", exc


def _csv_records(text: str) -> Iterator[tuple[str, object]]:
    """(where, record) by the line each record starts on; strict quoting.

    A quote left open would otherwise swallow every following row into one
    cell; a CSV error ends the reading, so it is the last record reported.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, [])
    except csv.Error as exc:
        raise InvalidJobInput(f"Line 1: {_csv_problem(exc)}") from exc
    if "id" not in header or "product" not in header:
        raise InvalidJobInput("Line 1: the CSV header must name the columns id and product.")
    while True:
        where = f"Line {reader.line_num + 1}"
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield where, InvalidRequest(_csv_problem(exc))
            return
        if not cells:
            continue
        if len(cells) != len(header):
            yield where, InvalidRequest(
                f"The row has {len(cells)} cells; the header has {len(header)}."
            )
        else:
            yield where, _typed_csv_row(dict(zip(header, cells)))


def _csv_problem(exc: csv.Error) -> str:
    # The csv module tells its errors apart by message only.
    message = str(exc)
    if "field larger than field limit" in message:
        return f"A cell is longer than {csv.field_size_limit()} characters (a quote left open?)."
    if "unexpected end of data" in message:
        return "A quoted cell is not closed: its quote runs to the end of the file."
    return f"Not valid CSV: {message}."


def _typed_csv_row(row: dict) -> dict:
    """CSV cells are text: an empty option cell means "not given", booleans are true/false."""
    typed = {}
    for name, value in row.items():
        if name in OPTION_FIELDS and value == "":
            continue
        if name in BOOLEAN_OPTIONS:
            value = _boolean_text(value)
        typed[name] = value
    return typed


def _boolean_text(value: str):
    # Anything but true/false stays a string, which validation then refuses by name.
    return {"true": True, "false": False}.get(value.strip().lower(), value)


def _query_options(query: dict) -> dict:
    options = {name: query[name] for name in OPTION_FIELDS if name in query}
    for name in BOOLEAN_OPTIONS:
        if name in options:
            options[name] = _boolean_text(options[name])
    return options


def _check_options(options: dict) -> None:
    try:
        classification_request_from({**options, "product": "job options"})
    except InvalidRequest as exc:
        raise InvalidJobInput(f"Job options: {exc}") from exc


def _validate(
    records: Iterator[tuple[str, object]], options: dict, max_items: int, max_item_bytes: int
) -> JobInput:
    job_input = JobInput()
    errors: list[str] = []
    seen_ids: dict[str, str] = {}
    extra_columns: dict[str, None] = {}
    for where, record in records:
        if len(job_input.items) >= max_items:
            raise InvalidJobInput(f"A job holds at most {max_items} items.")
        try:
            item = _item(record, options, max_item_bytes)
        except InvalidRequest as exc:
            errors.append(f"{where}: {exc}")
            continue
        if item.item_id in seen_ids:
            errors.append(f"{where}: id {item.item_id!r} repeats {seen_ids[item.item_id]}.")
            continue
        seen_ids[item.item_id] = where
        extra_columns.update(dict.fromkeys(item.extra or ()))
        job_input.items.append(item)
    if errors:
        shown = "\n".join(errors[:MAX_REPORTED_ERRORS])
        more = len(errors) - MAX_REPORTED_ERRORS
        raise InvalidJobInput(
            f"The job was not accepted; {len(errors)} bad lines. First ones:\n{shown}"
            + (f"\n(and {more} more)" if more > 0 else "")
        )
    if not job_input.items:
        raise InvalidJobInput("A job needs at least one item.")
    job_input.extra_columns = list(extra_columns)
    return job_input


def _item(record: object, options: dict, max_item_bytes: int) -> ParsedItem:
    if isinstance(record, InvalidRequest):
        raise record
    if not isinstance(record, dict):
        raise InvalidRequest("An item must be an object.")
    if _size(record) > max_item_bytes:
        raise InvalidRequest(f"{TOO_LARGE} An item is at most {max_item_bytes} bytes.")
    item_id = record.get("id")
    if isinstance(item_id, int) and not isinstance(item_id, bool):
        item_id = str(item_id)
    if not isinstance(item_id, str) or not item_id.strip():
        raise InvalidRequest("Field 'id' is required: a non-empty string.")
    if len(item_id) > MAX_ITEM_ID_LENGTH:
        raise InvalidRequest(f"Field 'id' is longer than {MAX_ITEM_ID_LENGTH} characters.")
    check_text("Field 'id'", item_id)
    overrides = {name: record[name] for name in OPTION_FIELDS if name in record}
    fields = {**options, **overrides}
    if "product" in record:
        fields["product"] = record["product"]
    request = classification_request_from(fields)
    extra = {name: value for name, value in record.items() if name not in ITEM_FIELDS}
    # Echoed in the results, whose CSV and JSON must encode: no lone surrogates.
    check_text("Extra fields", json.dumps(extra, ensure_ascii=False))
    return ParsedItem(item_id=item_id, request=request, extra=extra or None)


def _size(record: dict) -> int:
    """The item's size as the synchronous endpoint's JSON body, in UTF-8."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass"))
