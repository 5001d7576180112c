"""Rows a bulk job writes to the money ledger and to the usage table, and the time it takes.

Submits a job through the job service (no HTTP, no classification), settles
every chunk as classified, and counts the rows the settlement added.

    python bench/credit_rows.py [--items 10000] [--chunk 50] [--database-url sqlite:///...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import func, select

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from shared.accounts import service as accounts  # noqa: E402
from shared.classification.models import ClassificationRequest  # noqa: E402
from shared.credits import service as credits  # noqa: E402
from shared.credits.models import LedgerEntry, UsageRecord  # noqa: E402
from shared.db.migrate import open_database  # noqa: E402
from shared.jobs import chunks as job_chunks  # noqa: E402
from shared.jobs import submission  # noqa: E402
from shared.jobs.chunks import ItemEnd  # noqa: E402
from shared.jobs.models import ITEM_DONE  # noqa: E402
from shared.jobs.parsing import JobInput, ParsedItem  # noqa: E402
from shared.settings import Settings  # noqa: E402

FOUND = {"success": True, "categoryFound": True, "categoryId": "1"}
DEADLINE_SECONDS = 3600


def count(session, model) -> int:
    return session.scalar(select(func.count()).select_from(model))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--chunk", type=int, default=Settings.job_chunk_size)
    parser.add_argument("--database-url", default=None, help="default: a new SQLite file")
    args = parser.parse_args()
    url = args.database_url or f"sqlite:///{tempfile.mkdtemp()}/credit_rows.sqlite3"
    database = open_database(url)
    with database.session() as session:
        account_id = accounts.create_account(session, f"bench-{time.time_ns()}@example.test").id
        credits.open_balance(session, account_id, monthly_allowance=args.items)
    items = [ParsedItem(f"i{n}", ClassificationRequest(product=f"product {n}"), None) for n in range(args.items)]
    with database.session() as session:
        ledger_before, usage_before = count(session, LedgerEntry), count(session, UsageRecord)
    job, chunks = submission.submit(
        database,
        account_id,
        JobInput(items=items),
        idempotency_key=None,
        chunk_size=args.chunk,
        chunks_in_flight=1,
        deadline_seconds=DEADLINE_SECONDS,
    )
    started = time.perf_counter()
    while chunks:
        with database.session() as session:
            claimed = job_chunks.claim_chunk(session, chunks[0], "bench")
        with database.session() as session:
            ends = [ItemEnd(item.position, ITEM_DONE, FOUND) for item in claimed]
            chunks = job_chunks.settle_chunk(session, chunks[0], ends, [])
    settle_seconds = time.perf_counter() - started
    with database.session() as session:
        ledger_rows = count(session, LedgerEntry) - ledger_before
        usage_rows = count(session, UsageRecord) - usage_before
    database.dispose()
    print(f"{args.items} items in chunks of {args.chunk} on {url.split(':')[0]}:")
    print(f"  ledger rows written by the job: {ledger_rows} (submission and settlement)")
    print(f"  usage rows written: {usage_rows}")
    print(f"  claim + settle of every chunk: {settle_seconds:.2f} s")


if __name__ == "__main__":
    main()
