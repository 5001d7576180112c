"""Bulk jobs: upload a CSV or JSON Lines file, watch progress, download results, cancel.

The same service calls as /api/v1/jobs (docs/bulk-jobs.md): the file is parsed
and checked whole, its credits are held, its chunks go to the bulk queue.
The page reloads itself while a job is active, so progress shows without JavaScript.
"""

from __future__ import annotations

import logging
from pathlib import PurePath

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse

from api import errors
from api.context import ApiContext
from api.dashboard.csrf import checked_form
from api.dashboard.rendering import render
from api.dashboard.sessions import context_of, signed_in
from shared.accounts.models import Account
from shared.classification.models import DEFAULT_TAXONOMY, TAXONOMY_NAMES
from shared.credits.errors import InsufficientCredits
from shared.jobs import results, service
from shared.jobs.errors import InvalidJobInput, JobNotFound
from shared.jobs.models import ACTIVE_JOB_STATUSES, JOB_QUEUED, JOB_RUNNING, is_job_id
from shared.jobs.parsing import BOOLEAN_OPTIONS, FORMAT_CSV, FORMAT_JSONL
from worker import bulk

logger = logging.getLogger(__name__)

JOBS_PATH = "/dashboard/jobs"
JOBS_SHOWN = 20
REFRESH_SECONDS = 3
# The upload's type comes from its name: browsers send no reliable type for .jsonl.
CONTENT_TYPES = {".csv": "text/csv", ".jsonl": "application/x-ndjson", ".ndjson": "application/x-ndjson"}
DOWNLOAD_TYPES = {FORMAT_CSV: "text/csv; charset=utf-8", FORMAT_JSONL: "application/x-ndjson"}
NOT_FOUND = "No such job on this account."


@signed_in
async def jobs_page(request: Request, account: Account) -> Response:
    return await _render(request, account)


@signed_in
async def submit(request: Request, account: Account) -> Response:
    context = context_of(request)
    form = await checked_form(request, context.settings.job_max_body_bytes)
    upload = form.get("file")
    try:
        content_type, body = await _read_upload(upload, context.settings.job_max_body_bytes)
        job, chunks = await run_in_threadpool(
            service.submit_upload,
            context.database,
            context.settings,
            account.id,
            body,
            content_type,
            _options(form),
        )
    except InvalidJobInput as exc:
        return await _render(request, account, error=str(exc), status_code=400)
    except InsufficientCredits:
        return await _render(request, account, error=errors.INSUFFICIENT_CREDITS, status_code=400)
    try:
        await run_in_threadpool(bulk.send, context.tasks, chunks)
    except Exception:
        # The job is stored and its credits held: the sweep sends its chunks later.
        logger.exception("job %s: chunks not sent; the sweep will send them", job.id)
    return RedirectResponse(JOBS_PATH, status_code=303)


@signed_in
async def cancel(request: Request, account: Account) -> Response:
    await checked_form(request)
    await run_in_threadpool(_owned, context_of(request), service.cancel, account.id, _job_id(request))
    return RedirectResponse(JOBS_PATH, status_code=303)


@signed_in
async def download(request: Request, account: Account) -> Response:
    context = context_of(request)
    kind = request.path_params["format"]
    if kind not in DOWNLOAD_TYPES:
        raise HTTPException(404, NOT_FOUND)
    job = await run_in_threadpool(_owned, context, service.get, account.id, _job_id(request))
    items = service.iterate_results(context.database, job.id)
    lines = (
        results.jsonl_lines(items)
        if kind == FORMAT_JSONL
        else results.csv_lines(items, results.extra_columns(job))
    )
    disposition = f'attachment; filename="{job.id}-results.{kind}"'
    return StreamingResponse(
        lines, media_type=DOWNLOAD_TYPES[kind], headers={"Content-Disposition": disposition}
    )


async def _render(request: Request, account: Account, **values) -> Response:
    jobs = await run_in_threadpool(_list, context_of(request), account.id)
    views = [service.job_view(job) for job in jobs]
    return render(
        request,
        "jobs.html",
        account=account,
        jobs=views,
        taxonomies=TAXONOMY_NAMES,
        default_taxonomy=DEFAULT_TAXONOMY,
        max_items=context_of(request).settings.max_job_items,
        cancellable=(JOB_QUEUED, JOB_RUNNING),
        refresh_seconds=REFRESH_SECONDS
        if any(view["status"] in ACTIVE_JOB_STATUSES for view in views)
        else None,
        **values,
    )


async def _read_upload(upload, max_bytes: int) -> tuple[str, bytes]:
    if not isinstance(upload, UploadFile) or not upload.filename:
        raise InvalidJobInput("Choose a CSV or JSON Lines file to upload.")
    content_type = CONTENT_TYPES.get(PurePath(upload.filename).suffix.lower())
    if content_type is None:
        raise InvalidJobInput("The file must end in .csv or .jsonl.")
    body = await upload.read(max_bytes + 1)
    if len(body) > max_bytes:
        raise InvalidJobInput(f"{errors.TOO_LARGE} The file may hold at most {max_bytes} bytes.")
    return content_type, body


def _options(form) -> dict:
    """The job-level options, as the API takes them in the query string."""
    options = {"taxonomy": str(form.get("taxonomy", DEFAULT_TAXONOMY))}
    instructions = str(form.get("customInstructionsForAi", "")).strip()
    if instructions:
        options["customInstructionsForAi"] = instructions
    for name in BOOLEAN_OPTIONS:
        options[name] = "true" if name in form else "false"
    return options


def _list(context: ApiContext, account_id: int):
    with context.database.session() as session:
        return service.list_jobs(session, account_id, JOBS_SHOWN, None)


def _owned(context: ApiContext, action, account_id: int, job_id: str):
    with context.database.session() as session:
        try:
            return action(session, account_id, job_id)
        except JobNotFound:
            raise HTTPException(404, NOT_FOUND) from None


def _job_id(request: Request) -> str:
    job_id = request.path_params["job_id"]
    if not is_job_id(job_id):
        raise HTTPException(404, NOT_FOUND)
    return job_id
