"""`taxonomist jobs ...`: submit a file, follow it, fetch its results; `jobs sweep` for operators."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from shared.db.session import Database
from shared.jobs.client import ClientError, JobsClient
from shared.jobs.models import ACTIVE_JOB_STATUSES
from shared.settings import Settings

DEFAULT_URL = "http://127.0.0.1:8000"
POLL_SECONDS = 1.0
PROGRESS_WIDTH = 30


def register(subparsers) -> None:
    jobs = subparsers.add_parser("jobs", help="bulk jobs").add_subparsers(
        dest="jobs_command", required=True
    )
    submit = jobs.add_parser("submit", help="submit a CSV (id,product,...) or JSON Lines file")
    submit.add_argument("file", type=Path)
    submit.add_argument("--taxonomy", help="Google (default) or Shopify")
    submit.add_argument("--leafs-only", action="store_true")
    submit.add_argument("--fallback-to-best-guess", action="store_true")
    submit.add_argument("--instructions", help="customInstructionsForAi for every item")
    submit.add_argument("--wait", action="store_true", help="show progress until the job ends")
    submit.add_argument("--out", type=Path, help="write the results here (.csv or .jsonl); implies --wait")
    submit.set_defaults(func=_client_command(submit_job))
    status = jobs.add_parser("status", help="show a job")
    status.add_argument("job_id")
    status.set_defaults(func=_client_command(show_status))
    results = jobs.add_parser("results", help="download a job's results")
    results.add_argument("job_id")
    results.add_argument("--out", type=Path, required=True, help=".csv or .jsonl")
    results.set_defaults(func=_client_command(download_results))
    cancel = jobs.add_parser("cancel", help="cancel the items not started yet")
    cancel.add_argument("job_id")
    cancel.set_defaults(func=_client_command(cancel_job))
    for parser in (submit, status, results, cancel):
        parser.add_argument("--url", default=os.environ.get("TAXONOMIST_URL", DEFAULT_URL))
        parser.add_argument("--key", default=os.environ.get("TAXONOMIST_API_KEY"))
    sweep = jobs.add_parser(
        "sweep", help="revive stuck jobs, delete expired ones, refund stale reservations (for cron)"
    )
    sweep.set_defaults(func=run_sweep)


def _client_command(action):
    def run(args) -> int:
        if not args.key:
            print("taxonomist jobs: give --key or set TAXONOMIST_API_KEY", file=sys.stderr)
            return 2
        client = JobsClient(args.url, args.key)
        try:
            return action(client, args)
        except ClientError as exc:
            print(f"taxonomist jobs: {exc}", file=sys.stderr)
            return 1
        finally:
            client.close()

    return run


def submit_job(client: JobsClient, args) -> int:
    options = {"taxonomy": args.taxonomy, "customInstructionsForAi": args.instructions}
    options = {name: value for name, value in options.items() if value is not None}
    if args.leafs_only:
        options["leafsOnly"] = "true"
    if args.fallback_to_best_guess:
        options["fallbackToBestGuess"] = "true"
    job = client.submit(args.file, options)
    print(job["id"])
    if not (args.wait or args.out):
        return 0
    job = _follow(client, job)
    if args.out:
        client.download(job["id"], args.out)
        print(f"results written to {args.out}", file=sys.stderr)
    return 0 if job["status"] == "completed" else 1


def show_status(client: JobsClient, args) -> int:
    job = client.status(args.job_id)
    counts, credits = job["counts"], job["credits"]
    print(
        f"{job['id']} {job['status']}: {counts['done']} of {counts['total']} done "
        f"({counts['found']} found, {counts['notFound']} not found), {counts['failed']} failed, "
        f"{counts['cancelled']} cancelled; credits held {credits['held']}, "
        f"consumed {credits['consumed']}, refunded {credits['refunded']}"
    )
    return 0


def download_results(client: JobsClient, args) -> int:
    client.download(args.job_id, args.out)
    print(f"results written to {args.out}", file=sys.stderr)
    return 0


def cancel_job(client: JobsClient, args) -> int:
    print(client.cancel(args.job_id)["status"])
    return 0


def _follow(client: JobsClient, job: dict) -> dict:
    while job["status"] in ACTIVE_JOB_STATUSES:
        _progress(job)
        time.sleep(POLL_SECONDS)
        job = client.status(job["id"])
    _progress(job)
    print(file=sys.stderr)
    return job


def _progress(job: dict) -> None:
    counts = job["counts"]
    ended = counts["done"] + counts["failed"] + counts["cancelled"]
    filled = PROGRESS_WIDTH * ended // max(1, counts["total"])
    left = job.get("estimatedSecondsLeft")
    eta = f" ~{left:.0f}s left" if left else ""
    print(
        f"\r[{'#' * filled}{'.' * (PROGRESS_WIDTH - filled)}] {ended}/{counts['total']} "
        f"{job['status']}{eta}   ",
        end="",
        file=sys.stderr,
        flush=True,
    )


def run_sweep(args) -> int:
    # Imported here: the periodic work loads the worker's runtime, which only this command needs.
    from worker.celery_app import make_celery
    from worker.periodic import PERIODIC_WORK

    app = make_celery(Settings.from_environ())
    database = Database(app.settings.database_url)
    try:
        # Once each, what `taxonomist beat` schedules: for a deployment without it.
        for work in PERIODIC_WORK.values():
            work(app, database)
    finally:
        database.dispose()
    return 0
