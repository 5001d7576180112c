"""Every setting of the service, declared once and read once from the environment (twelve-factor).

Each field of `Settings` is declared by `setting(...)`: its environment
variable, default, validation and help text sit on that one line, its type is
the field's annotation. `Settings.from_environ()` is the only place that reads
the environment; the rest of the code receives a `Settings` value. Values that
must never be printed are wrapped in `starlette.datastructures.Secret`.

`python -m shared.settings --markdown` prints the README's configuration table.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import types
import typing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from starlette.datastructures import Secret

AI_PROVIDERS = ("local", "openai")
# What the synchronous deadline keeps beyond the AI's budget: candidates,
# the credit's settlement and the way back to the front.
MIN_CLASSIFY_MARGIN_SECONDS = 2.0
# TAXONOMIST_CACHE_DIR's fallback, the XDG base directory convention.
XDG_CACHE_HOME = "XDG_CACHE_HOME"


class ConfigurationError(Exception):
    """A setting is missing or invalid; the message names the variable."""


def limits(text: str) -> tuple[int, int, int]:
    """"5/20/50" as (per minute, per hour, per day), or ValueError."""
    parts = text.split("/")
    if len(parts) != 3 or not all(part.strip().isdigit() for part in parts):
        raise ValueError("not three whole numbers: per minute/per hour/per day")
    per_minute, per_hour, per_day = (int(part) for part in parts)
    return per_minute, per_hour, per_day


@dataclass(frozen=True)
class Setting:
    """How one field of `Settings` comes from the environment."""

    env: str
    help: str
    # From text to the field's type; None: the field's annotated type.
    parse: Callable[[str], Any] | None = None
    minimum: float | None = None
    choices: tuple[str, ...] = ()
    # The README's words for a default the code derives where it is used.
    shown_default: str | None = None

    def read(self, text: str, parse: Callable[[str], Any]) -> Any:
        try:
            value = (self.parse or parse)(text)
        except ValueError as exc:
            raise ConfigurationError(f"{self.env}={text!r} is invalid: {exc}.") from exc
        self.check(value)
        return value

    def check(self, value: Any) -> None:
        if self.choices and value not in self.choices:
            raise ConfigurationError(
                f"{self.env} must be one of {', '.join(self.choices)}, not {value!r}."
            )
        if self.minimum is not None and value is not None and value < self.minimum:
            raise ConfigurationError(f"{self.env} must be at least {self.minimum:g}, not {value!r}.")


def setting(env: str, default: Any, help: str, **rules: Any) -> Any:
    """A `Settings` field read from the variable `env` (rules: see `Setting`)."""
    return dataclasses.field(default=default, metadata={"setting": Setting(env, help, **rules)})


@dataclass(frozen=True)
class Settings:
    taxonomy_dir: Path | None = setting(
        "TAXONOMY_DIR", None,
        "folder with `google/taxonomy-with-ids.en-US.txt` and `shopify/categories.txt` "
        "(and Shopify's richer files where present)",
        shown_default="none (required)",
    )
    database_url: str = setting(
        "DATABASE_URL", "sqlite:///taxonomist.sqlite3",
        "SQLite or PostgreSQL (`postgresql://...`); the schema is migrated on start",
    )
    # Empty broker URL means the embedded mode: in-memory broker, worker in-process.
    celery_broker_url: str = setting(
        "CELERY_BROKER_URL", "",
        "empty: embedded mode. `redis://...`: `serve` runs the front only, for separate workers",
    )
    redis_url: str = setting(
        "REDIS_URL", "", "shared counters (rate limits, AI bucket, replies)",
        shown_default="the broker URL",
    )
    # Prefix of every Redis key and Celery queue: deployments can share a Redis.
    redis_namespace: str = setting(
        "REDIS_NAMESPACE", "taxonomist", "prefix of every Redis key and Celery queue"
    )
    ai_provider: str = setting(
        "AI_PROVIDER", "local", "`local` (offline) or `openai`", choices=AI_PROVIDERS
    )
    openai_base_url: str | None = setting(
        "OPENAI_BASE_URL", None,
        "any OpenAI-compatible endpoint ([docs/upstream-ai.md](docs/upstream-ai.md))",
        shown_default="OpenAI's",
    )
    openai_api_key: Secret = setting("OPENAI_API_KEY", Secret(""), "the upstream AI's key")
    ai_model: str = setting("AI_MODEL", "gpt-4o-mini", "the upstream AI's model")
    # Two attempts of 12 s and a backoff fit the 25 s budget: a retry after a
    # timeout is a useful one (self-hosted servers raise all three together).
    ai_timeout_seconds: float = setting(
        "AI_TIMEOUT_SECONDS", 12.0, "timeout of one attempt", minimum=0
    )
    ai_attempts: int = setting(
        "AI_ATTEMPTS", 3, "attempts per `select` (the first included)", minimum=1
    )
    # Below CLASSIFY_TIMEOUT_SECONDS, so that a synchronous request gets our
    # answer, even a failure, before its own deadline.
    ai_total_seconds: float = setting(
        "AI_TOTAL_SECONDS", 25.0,
        "time budget of all attempts of one `select`, waits included; at least "
        "`AI_TIMEOUT_SECONDS`, at most `CLASSIFY_TIMEOUT_SECONDS` less 2 s",
        minimum=0,
    )
    # The product text's share of the prompt: with the system prompt, 15
    # candidates and the answer, it fits a 2,048-token context.
    ai_product_tokens: int = setting(
        "AI_PRODUCT_TOKENS", 1_000, "the product text is cut to about this many tokens", minimum=1
    )
    ai_requests_per_minute: int = setting(
        "AI_REQUESTS_PER_MINUTE", 500, "the provider's request limit, for the whole fleet",
        minimum=1,
    )
    ai_tokens_per_minute: int = setting(
        "AI_TOKENS_PER_MINUTE", 200_000, "the provider's token limit, for the whole fleet",
        minimum=1,
    )
    ai_max_wait_seconds: float = setting(
        "AI_MAX_WAIT_SECONDS", 5.0, "how long a synchronous request may wait for capacity",
        minimum=0,
    )
    # No cap by default: hosted providers limit requests and tokens per minute,
    # not calls in flight; a self-hosted server's number is its slots, which
    # only its operator knows (docs/upstream-ai.md).
    ai_max_concurrency: int = setting(
        "AI_MAX_CONCURRENCY", 0,
        "upstream AI calls in flight at once, for the whole fleet (0: no cap)", minimum=0,
    )
    support_email: str = setting(
        "SUPPORT_EMAIL", "support@example.com", "named where the 3-key limit is explained"
    )
    max_body_bytes: int = setting(
        "MAX_BODY_BYTES", 16 * 1024, "largest classification request body", minimum=1
    )
    candidate_count: int = setting(
        "CANDIDATE_COUNT", 15, "candidates per classification", minimum=1
    )
    local_confidence_threshold: float | None = setting(
        "LOCAL_CONFIDENCE_THRESHOLD", None,
        "when the local selector decides rather than declines",
        shown_default=(
            "`0.60` (the local selector's probability that its answer is exact, "
            "calibrated on held-out folds)"
        ),
    )
    classify_timeout_seconds: float = setting(
        "CLASSIFY_TIMEOUT_SECONDS", 30.0,
        "a request's deadline: its answer by then, charged only for a 200 by then", minimum=0,
    )
    reservation_sweep_interval_seconds: int = setting(
        "RESERVATION_SWEEP_INTERVAL_SECONDS", 60,
        "time between sweeps refunding credits held past their deadline (0: none)", minimum=0,
    )
    default_per_minute: int = setting(
        "DEFAULT_PER_MINUTE", 200, "account limit a minute when the account sets none", minimum=0
    )
    default_per_hour: int = setting(
        "DEFAULT_PER_HOUR", 1_000, "account limit an hour when the account sets none", minimum=0
    )
    default_per_day: int = setting(
        "DEFAULT_PER_DAY", 5_000, "account limit a day when the account sets none", minimum=0
    )
    default_monthly_credits: int = setting(
        "DEFAULT_MONTHLY_CREDITS", 100, "allowance of new accounts", minimum=0
    )
    secret_key: Secret = setting(
        "SECRET_KEY", Secret(""), "signs dashboard sessions", shown_default="random per process"
    )
    # Bulk jobs (shared/jobs): see docs/bulk-jobs.md.
    max_job_items: int = setting("MAX_JOB_ITEMS", 100_000, "items in one job", minimum=1)
    job_max_body_bytes: int = setting(
        "JOB_MAX_BODY_BYTES", 64 * 1024 * 1024, "body size of a submission (413 beyond)", minimum=1
    )
    job_retention_days: int = setting(
        "JOB_RETENTION_DAYS", 30, "days results are kept after the job ended", minimum=0
    )
    job_chunk_size: int = setting("JOB_CHUNK_SIZE", 50, "items per task", minimum=1)
    job_chunks_in_flight: int = setting(
        "JOB_CHUNKS_IN_FLIGHT", 4, "chunks of one job on the queue at once", minimum=1
    )
    job_stale_seconds: int = setting(
        "JOB_STALE_SECONDS", 300, "a job not moving for this long is revived by the sweep",
        minimum=1,
    )
    job_sweep_interval_seconds: int = setting(
        "JOB_SWEEP_INTERVAL_SECONDS", 60, "time between job sweeps (0: none)", minimum=0
    )
    job_deadline_seconds: int = setting(
        "JOB_DEADLINE_SECONDS", 24 * 3600,
        "past this, an item still rate-limited fails (refunded)", minimum=1,
    )
    # Dashboard: addresses whose X-Forwarded-Proto / X-Forwarded-For are believed
    # (uvicorn's forwarded_allow_ips); none by default.
    trusted_proxies: str = setting(
        "TRUSTED_PROXIES", "",
        "reverse proxies whose `X-Forwarded-Proto`/`-For` are believed "
        "(https cookies, client addresses)",
    )
    # Per client address, "per minute/per hour/per day" (docs/dashboard.md).
    signin_limits_per_address: tuple[int, int, int] = setting(
        "SIGNIN_LIMITS_PER_ADDRESS", (30, 300, 1000),
        "dashboard sign-in attempts per client address, a minute/hour/day "
        "([docs/dashboard.md](docs/dashboard.md))",
        parse=limits,
    )
    signup_limits_per_address: tuple[int, int, int] = setting(
        "SIGNUP_LIMITS_PER_ADDRESS", (3, 10, 20),
        "dashboard sign-ups per client address, a minute/hour/day",
        parse=limits,
    )
    cache_dir: Path | None = setting(
        "TAXONOMIST_CACHE_DIR", None,
        "built search indexes, keyed by the files' content hash",
        shown_default="`$XDG_CACHE_HOME/taxonomist`, else `~/.cache/taxonomist`",
    )
    # Connection pools of each process (docs/throughput.md): when one is
    # exhausted a call waits for a free connection rather than failing.
    # Each request waiting for its worker holds one Redis connection (BLPOP).
    redis_max_connections: int = setting(
        "REDIS_MAX_CONNECTIONS", 500, "Redis connections per process (a waiting request holds one)",
        minimum=1,
    )
    redis_pool_timeout_seconds: float = setting(
        "REDIS_POOL_TIMEOUT_SECONDS", 10.0,
        "how long a call waits for a free Redis connection of its process", minimum=0,
    )
    database_pool_size: int = setting(
        "DATABASE_POOL_SIZE", 20, "database connections kept open per process", minimum=1
    )
    database_max_overflow: int = setting(
        "DATABASE_MAX_OVERFLOW", 20, "database connections opened beyond the pool at peaks", minimum=0
    )
    database_pool_timeout_seconds: float = setting(
        "DATABASE_POOL_TIMEOUT_SECONDS", 10.0,
        "how long a call waits for a free database connection of its process", minimum=0,
    )

    @property
    def embedded(self) -> bool:
        """True when no broker is configured: one process runs everything."""
        return not self.celery_broker_url

    @property
    def shared_redis_url(self) -> str:
        """Redis for counters shared between processes; empty in the embedded mode."""
        return self.redis_url or (
            self.celery_broker_url if self.celery_broker_url.startswith("redis") else ""
        )

    def with_overrides(self, **changes) -> "Settings":
        return replace(self, **changes)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        environ = os.environ if environ is None else environ
        types_of = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        for name, declared in declared_settings():
            # An empty variable counts as unset, as in a compose file's `${X:-}`.
            text = environ.get(declared.env)
            if text:
                values[name] = declared.read(text, _parser_of(types_of[name]))
        xdg_cache_home = environ.get(XDG_CACHE_HOME)
        if "cache_dir" not in values and xdg_cache_home:
            values["cache_dir"] = Path(xdg_cache_home) / "taxonomist"
        settings = cls(**values)
        if settings.ai_provider == "openai":
            settings.check_ai_budget()
        return settings

    def check_ai_budget(self) -> None:
        """The upstream AI's time budget holds one attempt and leaves the
        synchronous deadline room for the answer."""
        for name in ("ai_attempts", "ai_product_tokens", "ai_max_concurrency"):
            setting_of(name).check(getattr(self, name))
        if not 0 < self.ai_timeout_seconds <= self.ai_total_seconds:
            raise ConfigurationError(
                f"AI_TIMEOUT_SECONDS ({self.ai_timeout_seconds:g}) must be positive and at most "
                f"AI_TOTAL_SECONDS ({self.ai_total_seconds:g}), the budget of all attempts."
            )
        if self.ai_total_seconds + MIN_CLASSIFY_MARGIN_SECONDS > self.classify_timeout_seconds:
            raise ConfigurationError(
                f"AI_TOTAL_SECONDS ({self.ai_total_seconds:g}) must leave "
                f"{MIN_CLASSIFY_MARGIN_SECONDS:g} s of CLASSIFY_TIMEOUT_SECONDS "
                f"({self.classify_timeout_seconds:g}) for the answer: raise "
                "CLASSIFY_TIMEOUT_SECONDS or lower AI_TOTAL_SECONDS."
            )

    def require_taxonomy_dir(self) -> Path:
        """The taxonomy directory, or a ConfigurationError naming TAXONOMY_DIR."""
        if self.taxonomy_dir is None:
            raise ConfigurationError(
                "TAXONOMY_DIR is not set: point it at the folder holding "
                "google/taxonomy-with-ids.en-US.txt and shopify/categories.txt "
                "(`taxonomist taxonomies fetch DIR` downloads them)."
            )
        if not self.taxonomy_dir.is_dir() or not os.access(self.taxonomy_dir, os.R_OK):
            raise ConfigurationError(
                f"TAXONOMY_DIR={self.taxonomy_dir} is not a readable directory."
            )
        return self.taxonomy_dir

    def index_cache_dir(self) -> Path:
        """Where built search indexes are cached (keyed by file hash)."""
        return self.cache_dir or Path.home() / ".cache" / "taxonomist"


def declared_settings() -> list[tuple[str, Setting]]:
    """(field name, declaration) of every setting, in declaration order."""
    return [(field.name, field.metadata["setting"]) for field in dataclasses.fields(Settings)]


def setting_of(name: str) -> Setting:
    return dict(declared_settings())[name]


def _parser_of(annotation: Any) -> Callable[[str], Any]:
    """The type a variable's text becomes: the annotation, without its `| None`."""
    if isinstance(annotation, types.UnionType):
        (annotation,) = (member for member in typing.get_args(annotation) if member is not type(None))
    return annotation


def shown_default(name: str) -> str:
    """A field's default as the README shows it."""
    declared = setting_of(name)
    if declared.shown_default is not None:
        return declared.shown_default
    default = Settings.__dataclass_fields__[name].default
    if isinstance(default, tuple):
        return f"`{'/'.join(str(part) for part in default)}`"
    if default is None or not str(default):
        return "empty"
    return f"`{default:g}`" if isinstance(default, float) else f"`{default}`"


def markdown_table() -> str:
    rows = ["| Variable | Default | Meaning |", "|---|---|---|"]
    rows += [
        f"| `{declared.env}` | {shown_default(name)} | {declared.help} |"
        for name, declared in declared_settings()
    ]
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The service's settings.")
    parser.add_argument("--markdown", action="store_true", help="print the README's table")
    args = parser.parse_args(argv)
    if args.markdown:
        sys.stdout.write(markdown_table())
    else:
        parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
