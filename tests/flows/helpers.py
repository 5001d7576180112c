"""What the use cases run with in tests: a real database, the in-process limiter and reply
channel, and task senders that stand in for Celery (they record, fail, or run the task inline)."""

from __future__ import annotations

from dataclasses import dataclass, field

from shared.accounts import service as accounts
from shared.accounts.models import Account
from shared.accounts.service import RateLimits
from shared.ai.errors import AIRateLimited
from shared.classification.models import CONFIDENCE_AI, ClassificationRequest, ClassificationResult
from shared.credits import service as credits
from shared.db.session import Database
from shared.flows.classify import perform
from shared.flows.outcomes import to_message
from shared.ratelimit.accounts import InProcessAccountLimiter
from shared.settings import Settings
from shared.taxonomy.models import Candidate, Category
from worker.replies import InProcessReplies

KNIVES = Category("1", "Knives", "Kitchen > Knives", None, 1, True)
FORKS = Category("2", "Forks", "Kitchen > Forks", None, 1, True)
RATE_LIMITED_PRODUCT = "upstream says wait"
BROKEN_PRODUCT = "breaks the classifier"
RETRY_AFTER_SECONDS = 7.0


def new_account(database: Database, monthly: int = 3, topup: int = 0) -> int:
    with database.session() as session:
        account = accounts.create_account(session, "flows@example.test")
        credits.open_balance(session, account.id, monthly_allowance=monthly, topup=topup)
        return account.id


def new_key(database: Database, account_id: int) -> str:
    """The `Authorization` header of a new API key of the account."""
    with database.session() as session:
        account = session.get_one(Account, account_id)
        return "Bearer " + accounts.create_key(session, account, "flows", "support@example.test").value


def balance(database: Database, account_id: int) -> int:
    with database.session() as session:
        return credits.show(session, account_id).total


class KnifeClassifier:
    """Every product is a knife, but two products that fail as the real pipeline can."""

    def classify(self, request: ClassificationRequest) -> ClassificationResult:
        if request.product == RATE_LIMITED_PRODUCT:
            raise AIRateLimited(retry_after=RETRY_AFTER_SECONDS)
        if request.product == BROKEN_PRODUCT:
            raise RuntimeError("broken")
        candidates = [Candidate(KNIVES, 0.9), Candidate(FORKS, 0.2)]
        return ClassificationResult(KNIVES, CONFIDENCE_AI, candidates)

    def classify_many(self, requests):
        return [self.classify(request) for request in requests]


@dataclass
class RecordingSender:
    """Keeps what was sent; `fails` makes the broker unreachable."""

    fails: bool = False
    sent: list[tuple[str, tuple, dict]] = field(default_factory=list)

    def send_task(self, name, args=None, **options):
        if self.fails:
            raise ConnectionError("broker unreachable")
        self.sent.append((name, args, options))


@dataclass
class InlineWorker:
    """Runs the classify task at once, as a worker would, and answers on the front's channel."""

    database: Database
    replies: InProcessReplies
    classifier: KnifeClassifier = field(default_factory=KnifeClassifier)

    def send_task(self, name, args=None, **options):
        request, reservation_id, reply_key, with_candidates = args
        perform(
            self.classifier,
            self.database,
            ClassificationRequest.from_dict(request),
            reservation_id,
            lambda outcome: self.replies.publish(reply_key, to_message(outcome)),
            with_candidates,
        )


@dataclass
class TestFront:
    """The `shared.flows.ports.Front` of a test: what api.context.ApiContext is in the service."""

    __test__ = False

    database: Database
    tasks: object = None
    settings: Settings = field(default_factory=Settings)
    limiter: InProcessAccountLimiter = field(default_factory=InProcessAccountLimiter)
    replies: InProcessReplies = field(default_factory=InProcessReplies)
    default_limits: RateLimits = field(default_factory=lambda: RateLimits(1000, 1000, 1000))

    def __post_init__(self) -> None:
        if self.tasks is None:
            self.tasks = InlineWorker(self.database, self.replies)

    def new_reply_key(self) -> str:
        return self.replies.new_key()
