"""The classify use case: checks before any charge, one credit consumed or refunded, a typed outcome."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from sqlalchemy import event, func, select

from shared.accounts.errors import InvalidApiKey
from shared.accounts.models import ApiKey
from shared.accounts.service import RateLimits
from shared.credits import service as credits
from shared.classification.models import ClassificationRequest
from shared.credits.errors import InsufficientCredits
from shared.credits.models import OUTCOME_FOUND, CreditHold
from shared.db.base import utcnow
from shared.db.session import Database
from shared.flows.classify import BearerKey, classify, perform, refund_unsettled
from shared.flows.outcomes import Classified, Failed, RateLimited, from_message, to_message
from shared.flows.queue import CLASSIFY_TASK, INTERACTIVE_QUEUE
from shared.settings import Settings
from shared.validation import BodyTooLarge, InvalidRequest
from tests.flows.helpers import (
    BROKEN_PRODUCT,
    KnifeClassifier,
    RATE_LIMITED_PRODUCT,
    RETRY_AFTER_SECONDS,
    RecordingSender,
    TestFront,
    balance,
    new_account,
    new_key,
)
from worker.replies import InProcessReplies


def body(product: str, **fields) -> bytes:
    return json.dumps({"product": product, **fields}).encode()


def run(front: TestFront, account_id: int, payload: bytes, **options):
    return asyncio.run(classify(front, account_id, payload, **options))


def test_a_classification_costs_one_credit_and_carries_candidates_only_when_asked(database):
    account_id = new_account(database)
    front = TestFront(database)
    outcome = run(front, account_id, body("chef knife"))
    assert isinstance(outcome, Classified)
    assert outcome.response["categoryId"] == "1"
    assert outcome.candidates == []
    with_candidates = run(front, account_id, body("chef knife"), with_candidates=True)
    assert [candidate["id"] for candidate in with_candidates.candidates] == ["1", "2"]
    assert balance(database, account_id) == 1


@pytest.mark.parametrize(
    "product, expected",
    [(RATE_LIMITED_PRODUCT, RateLimited(RETRY_AFTER_SECONDS)), (BROKEN_PRODUCT, Failed())],
)
def test_what_the_worker_could_not_do_is_refunded(database, product, expected):
    account_id = new_account(database)
    assert run(TestFront(database), account_id, body(product)) == expected
    assert balance(database, account_id) == 3


def test_a_broker_that_takes_nothing_fails_the_request_and_refunds(database):
    account_id = new_account(database)
    front = TestFront(database, tasks=RecordingSender(fails=True))
    assert run(front, account_id, body("chef knife")) == Failed()
    assert balance(database, account_id) == 3


def test_the_task_is_sent_by_name_to_the_interactive_queue_without_the_product_in_its_repr(database):
    account_id = new_account(database)
    sender = RecordingSender()
    front = TestFront(database, tasks=sender, settings=Settings(classify_timeout_seconds=0.2))
    # Nobody answers: the wait times out and the credit comes back.
    assert run(front, account_id, body("secret product text")) == Failed()
    ((name, args, options),) = sender.sent
    assert (name, options["queue"]) == (CLASSIFY_TASK, INTERACTIVE_QUEUE)
    assert args[0]["product"] == "secret product text"
    assert "secret" not in options["argsrepr"]
    assert balance(database, account_id) == 3


@pytest.mark.parametrize(
    "payload, error",
    [
        (b"{", InvalidRequest),
        (body(""), InvalidRequest),
        (body("x" * 200), BodyTooLarge),
    ],
)
def test_bad_requests_are_refused_before_anything_is_charged(database, payload, error):
    account_id = new_account(database)
    front = TestFront(database, tasks=RecordingSender(), settings=Settings(max_body_bytes=100))
    with pytest.raises(error):
        run(front, account_id, payload)
    assert front.tasks.sent == []
    assert balance(database, account_id) == 3


def test_without_credits_nothing_is_sent(database):
    account_id = new_account(database, monthly=0)
    front = TestFront(database, tasks=RecordingSender())
    with pytest.raises(InsufficientCredits):
        run(front, account_id, body("chef knife"))
    assert front.tasks.sent == []


def key_last_used(database, account_id):
    with database.session() as session:
        return session.scalar(select(ApiKey.last_used_at).where(ApiKey.account_id == account_id))


def test_an_api_key_is_checked_then_limited_in_the_holds_transaction(database):
    account_id = new_account(database)
    key = new_key(database, account_id)
    front = TestFront(database, default_limits=RateLimits(1, 1000, 1000))
    with pytest.raises(InvalidApiKey):
        asyncio.run(classify(front, BearerKey(key + "x"), body("chef knife")))
    assert isinstance(asyncio.run(classify(front, BearerKey(key), body("chef knife"))), Classified)
    assert key_last_used(database, account_id) is not None
    limited = asyncio.run(classify(front, BearerKey(key), body("chef knife")))
    assert isinstance(limited, RateLimited) and limited.retry_after > 0
    assert balance(database, account_id) == 2


def test_a_bad_body_still_notes_the_keys_use_and_holds_nothing(database):
    account_id = new_account(database)
    key = new_key(database, account_id)
    front = TestFront(database, tasks=RecordingSender())
    with pytest.raises(InvalidRequest):
        asyncio.run(classify(front, BearerKey(key), b"{"))
    assert key_last_used(database, account_id) is not None
    assert front.tasks.sent == [] and balance(database, account_id) == 3


def test_a_hold_that_fails_after_authentication_leaves_no_write(database):
    account_id = new_account(database)
    key = new_key(database, account_id)
    front = TestFront(database, tasks=RecordingSender())

    # The database fails on the transaction's last statement: the key's use,
    # the balance taken and the hold written before it must all roll back.
    def fail_on_the_ledger(_connection, _cursor, statement, *_):
        # (On PostgreSQL the hold is one statement that ends with the ledger's INSERT.)
        if "INSERT INTO CREDIT_LEDGER" in statement.upper():
            raise RuntimeError("the database fails mid-transaction")

    event.listen(database.engine, "before_cursor_execute", fail_on_the_ledger)
    try:
        with pytest.raises(RuntimeError):
            asyncio.run(classify(front, BearerKey(key), body("chef knife")))
    finally:
        event.remove(database.engine, "before_cursor_execute", fail_on_the_ledger)
    assert front.tasks.sent == []
    assert balance(database, account_id) == 3
    assert key_last_used(database, account_id) is None
    with database.session() as session:
        assert session.scalar(select(func.count()).select_from(CreditHold)) == 0


def test_reservations_nobody_settled_are_refunded_once(database):
    account_id = new_account(database)
    # What a front that died between reserving and hearing back leaves behind.
    with database.session() as session:
        credits.hold(session, account_id, expires_at=utcnow() + timedelta(seconds=-1))
    assert balance(database, account_id) == 2
    assert refund_unsettled(database) == 1
    assert refund_unsettled(database) == 0
    assert balance(database, account_id) == 3


@pytest.mark.parametrize(
    "outcome",
    [Classified({"success": True}, [{"id": "1", "path": "A", "score": 0.5}]), RateLimited(2.5), Failed()],
)
def test_an_outcome_crosses_the_queue_as_its_kind(outcome):
    message = to_message(outcome)
    assert "status" not in message
    assert from_message(json.loads(json.dumps(message))) == outcome


@dataclass
class WorkerWithASlowReply:
    """A worker that consumes at `consume_at` seconds and whose reply reaches
    the front `REPLY_DELAY_SECONDS` later (a reply slow on its way)."""

    database: Database
    replies: InProcessReplies
    consume_at: float
    consumed: list[bool] = field(default_factory=list)

    def send_task(self, name, args=None, **options):
        _, reservation_id, reply_key, _ = args

        def work():
            time.sleep(self.consume_at)
            with self.database.session() as session:
                self.consumed.append(credits.consume(session, reservation_id, OUTCOME_FOUND))
            time.sleep(REPLY_DELAY_SECONDS)
            self.replies.publish(reply_key, to_message(Classified({"success": True}, [])))

        threading.Thread(target=work).start()


REPLY_DELAY_SECONDS = 0.8


@pytest.mark.parametrize(
    "consume_at, expected, charged",
    [
        # Before the front settles (1.5 s into its 2 s): its refund loses, it
        # awaits the reply sent before the consume, and answers it.
        (1.0, Classified({"success": True}, []), True),
        # After: the front's refund wins, its answer is a 500, the consume fails.
        (1.7, Failed(), False),
    ],
)
def test_at_its_deadline_the_front_and_the_worker_settle_once(database, consume_at, expected, charged):
    account_id = new_account(database)
    front = TestFront(database, settings=Settings(classify_timeout_seconds=2.0))
    front.tasks = WorkerWithASlowReply(database, front.replies, consume_at)
    assert run(front, account_id, body("chef knife")) == expected
    time.sleep(consume_at + REPLY_DELAY_SECONDS)
    assert front.tasks.consumed == [charged]
    assert balance(database, account_id) == (2 if charged else 3)


def perform_with(database, reservation_id, received: bool) -> list:
    answers = []

    def answer(outcome):
        answers.append(outcome)
        return received

    perform(KnifeClassifier(), database, ClassificationRequest("chef knife"), reservation_id, answer)
    return answers


@pytest.mark.parametrize("received, left", [(True, 2), (False, 3)])
def test_the_worker_charges_only_an_answer_that_was_received(database, received, left):
    account_id = new_account(database)
    with database.session() as session:
        held = credits.hold(session, account_id, expires_at=utcnow() + timedelta(minutes=1)).id
    (answer,) = perform_with(database, held, received)
    assert isinstance(answer, Classified)
    assert balance(database, account_id) == left
    with database.session() as session:
        # Settled either way: nothing left for the sweep.
        assert credits.expire_stale(session) == 0


def test_an_answer_received_past_the_deadline_is_not_charged(database):
    account_id = new_account(database)
    with database.session() as session:
        held = credits.hold(session, account_id, expires_at=utcnow() - timedelta(seconds=1)).id
    (answer,) = perform_with(database, held, received=True)
    assert isinstance(answer, Classified)
    assert refund_unsettled(database) == 1
    assert balance(database, account_id) == 3


def test_a_hold_made_after_the_front_gave_up_is_refunded_and_not_sent(database):
    account_id = new_account(database)
    front = TestFront(
        database, settings=Settings(classify_timeout_seconds=2.0), tasks=RecordingSender()
    )

    # The database answers the hold's ledger entry only after the front has
    # stopped waiting for its thread (1.5 s into its 2 s); then at once.
    stalled = threading.Event()

    def stall_on_the_ledger(_connection, _cursor, statement, *_):
        # (On PostgreSQL the hold is one statement that ends with the ledger's INSERT.)
        if "INSERT INTO CREDIT_LEDGER" in statement.upper() and not stalled.is_set():
            stalled.set()
            time.sleep(2.5)

    event.listen(database.engine, "before_cursor_execute", stall_on_the_ledger)
    try:
        started = time.monotonic()
        assert run(front, account_id, body("chef knife")) == Failed()
        assert time.monotonic() - started < 2.0
        time.sleep(2.0)  # the abandoned thread commits its hold, then sees nobody waits
    finally:
        event.remove(database.engine, "before_cursor_execute", stall_on_the_ledger)
    assert front.tasks.sent == []
    assert balance(database, account_id) == 3
