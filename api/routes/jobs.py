"""/api/v1/jobs: bulk jobs (docs/bulk-jobs.md). Thin: the work is in shared.flows and shared.jobs.

Every route checks as the synchronous endpoint does: authentication (401),
then the account's rate limit (429); a submission then checks its size (413),
its whole input (400) and the credits it needs (403), in that order.
Another account's job is a 404, never a 403.
"""

from __future__ import annotations

import base64
import functools
from datetime import datetime

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from api import errors
from api.admission import admit
from api.body import read_capped_body
from api.context import ApiContext
from api.job_view import job_view
from shared.credits.errors import InsufficientCredits
from shared.db.base import MAX_INTEGER
from shared.flows.cancel_job import cancel_job as cancel
from shared.flows.submit_job import submit_job as submit
from shared.jobs import actions, results
from shared.jobs.errors import InvalidJobInput, JobNotFound
from shared.jobs.models import MAX_IDEMPOTENCY_KEY_LENGTH, is_job_id
from shared.jobs.parsing import FORMAT_CSV, FORMAT_JSON, FORMAT_JSONL
from shared.validation import BodyTooLarge, InvalidRequest, bounded_int, check_text

NOT_FOUND = "Job not found."
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1_000
DEFAULT_JOBS_PAGE_SIZE = 20
MAX_JOBS_PAGE_SIZE = 100
STREAM_MEDIA_TYPES = {FORMAT_JSONL: "application/x-ndjson", FORMAT_CSV: "text/csv; charset=utf-8"}
ACCEPTED_MEDIA_TYPES = {
    "application/x-ndjson": FORMAT_JSONL,
    "application/jsonl": FORMAT_JSONL,
    "text/csv": FORMAT_CSV,
}
BAD_CURSOR = "Query parameter 'cursor' must be a cursor given by a previous page."


def account_route(handler):
    """Authenticate and rate-limit, then call `handler(request, context, account_id)`."""

    @functools.wraps(handler)
    async def route(request: Request) -> Response:
        caller = await admit(request)
        if isinstance(caller, Response):
            return caller
        try:
            return await handler(request, caller.context, caller.account_id)
        except JobNotFound:
            return errors.plain(404, NOT_FOUND)
        except InvalidRequest as exc:
            return errors.bad_request(str(exc))

    return route


@account_route
async def submit_job(request: Request, context: ApiContext, account_id: int) -> Response:
    settings = context.settings
    idempotency_key = request.headers.get("idempotency-key") or None
    if idempotency_key and len(idempotency_key) > MAX_IDEMPOTENCY_KEY_LENGTH:
        raise InvalidRequest(
            f"Idempotency-Key is longer than {MAX_IDEMPOTENCY_KEY_LENGTH} characters."
        )
    if idempotency_key:
        check_text("Header 'Idempotency-Key'", idempotency_key)
    try:
        body = await read_capped_body(request, settings.job_max_body_bytes)
        job = await run_in_threadpool(
            submit,
            context.database,
            settings,
            context.tasks,
            account_id,
            body,
            request.headers.get("content-type"),
            dict(request.query_params),
            idempotency_key,
        )
    except BodyTooLarge:
        return errors.too_large()
    except InvalidJobInput as exc:
        return errors.bad_request(str(exc))
    except InsufficientCredits:
        return errors.insufficient_credits()
    return JSONResponse(job_view(job), status_code=202)


@account_route
async def list_jobs(request: Request, context: ApiContext, account_id: int) -> Response:
    limit = _int_param(request, "limit", DEFAULT_JOBS_PAGE_SIZE, MAX_JOBS_PAGE_SIZE)
    before = _decode_jobs_cursor(request.query_params.get("cursor"))
    jobs = await run_in_threadpool(_read, context, actions.list_jobs, account_id, limit + 1, before)
    more = len(jobs) > limit
    jobs = jobs[:limit]
    return JSONResponse(
        {
            "jobs": [job_view(job) for job in jobs],
            "nextCursor": _encode_jobs_cursor(jobs[-1]) if more else None,
        }
    )


@account_route
async def get_job(request: Request, context: ApiContext, account_id: int) -> Response:
    job = await run_in_threadpool(
        _read, context, actions.get, account_id, _job_id(request)
    )
    return JSONResponse(job_view(job))


@account_route
async def cancel_job(request: Request, context: ApiContext, account_id: int) -> Response:
    job = await run_in_threadpool(cancel, context.database, account_id, _job_id(request))
    return JSONResponse(job_view(job))


@account_route
async def job_results(request: Request, context: ApiContext, account_id: int) -> Response:
    """A page of JSON with a cursor, or everything streamed as JSON Lines or CSV."""
    job = await run_in_threadpool(
        _read, context, actions.get, account_id, _job_id(request)
    )
    kind = _results_format(request)
    if kind == FORMAT_JSON:
        limit = _int_param(request, "limit", DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        cursor = request.query_params.get("cursor")
        after = None if cursor is None else _position_cursor(cursor)
        page = await run_in_threadpool(_read, context, actions.results_page, job.id, after, limit)
        return JSONResponse(
            {
                "jobStatus": job.status,
                "results": [results.result_object(item) for item in page.rows],
                "nextCursor": None if page.next_cursor is None else str(page.next_cursor),
            }
        )
    items = actions.iterate_results(context.database, job.id)
    lines = (
        results.jsonl_lines(items)
        if kind == FORMAT_JSONL
        else results.csv_lines(items, results.extra_columns(job))
    )
    return StreamingResponse(lines, media_type=STREAM_MEDIA_TYPES[kind])


def _read(context: ApiContext, action, *args):
    with context.database.session() as session:
        return action(session, *args)


def _results_format(request: Request) -> str:
    explicit = request.query_params.get("format")
    if explicit is not None:
        if explicit not in (FORMAT_JSON, FORMAT_JSONL, FORMAT_CSV):
            raise InvalidRequest("Query parameter 'format' must be json, jsonl or csv.")
        return explicit
    accept = request.headers.get("accept", "")
    for media_type in accept.split(","):
        kind = ACCEPTED_MEDIA_TYPES.get(media_type.split(";")[0].strip().lower())
        if kind:
            return kind
    return FORMAT_JSON


def _int_param(request: Request, name: str, default: int, maximum: int) -> int:
    value = request.query_params.get(name)
    if value is None:
        return default
    return bounded_int(f"Query parameter '{name}'", value, 1, maximum)


def _job_id(request: Request) -> str:
    job_id = request.path_params["job_id"]
    if not is_job_id(job_id):
        raise InvalidRequest("The path must name a job by its id (job_ and 32 hexadecimal digits).")
    return job_id


def _position_cursor(cursor: str) -> int:
    try:
        return bounded_int("Query parameter 'cursor'", cursor, 0, MAX_INTEGER)
    except InvalidRequest as exc:
        raise InvalidRequest(BAD_CURSOR) from exc


def _encode_jobs_cursor(job) -> str:
    raw = f"{job.created_at.isoformat()}|{job.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _decode_jobs_cursor(cursor: str | None) -> tuple[datetime, str] | None:
    if cursor is None:
        return None
    try:
        created_at, job_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|")
        moment = datetime.fromisoformat(created_at)
    except ValueError as exc:
        raise InvalidRequest(BAD_CURSOR) from exc
    # Ours always carry their time zone and a job id; a forged one may not.
    if moment.tzinfo is None or not is_job_id(job_id):
        raise InvalidRequest(BAD_CURSOR)
    return moment, job_id


ROUTES = [
    Route("/api/v1/jobs", submit_job, methods=["POST"]),
    Route("/api/v1/jobs", list_jobs, methods=["GET"]),
    Route("/api/v1/jobs/{job_id}", get_job, methods=["GET"]),
    Route("/api/v1/jobs/{job_id}/results", job_results, methods=["GET"]),
    Route("/api/v1/jobs/{job_id}/cancel", cancel_job, methods=["POST"]),
]
