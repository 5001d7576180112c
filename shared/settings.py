"""Every setting of the service, read once from the environment (twelve-factor).

`Settings.from_environ()` is the only place that reads the environment; the
rest of the code receives a `Settings` value. Values that must never be
printed are wrapped in `starlette.config.Secret`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from starlette.config import Config
from starlette.datastructures import Secret

DEFAULT_DATABASE_URL = "sqlite:///taxonomist.sqlite3"
DEFAULT_MAX_BODY_BYTES = 16 * 1024
DEFAULT_CANDIDATE_COUNT = 15
DEFAULT_PER_MINUTE = 200
DEFAULT_PER_HOUR = 1_000
DEFAULT_PER_DAY = 5_000
DEFAULT_MONTHLY_CREDITS = 100
DEFAULT_CLASSIFY_TIMEOUT_SECONDS = 30.0
# Two attempts of 12 s and a backoff fit the 25 s budget: a retry after a
# timeout is a useful one (self-hosted servers raise all three together).
DEFAULT_AI_TIMEOUT_SECONDS = 12.0
DEFAULT_AI_ATTEMPTS = 3
# Below CLASSIFY_TIMEOUT_SECONDS, so that a synchronous request gets our
# answer, even a failure, before its own deadline.
DEFAULT_AI_TOTAL_SECONDS = 25.0
# What the synchronous deadline keeps beyond the AI's budget: candidates,
# the credit's settlement and the way back to the front.
MIN_CLASSIFY_MARGIN_SECONDS = 2.0
# The product text's share of the prompt: with the system prompt, 15
# candidates and the answer, it fits a 2,048-token context.
DEFAULT_AI_PRODUCT_TOKENS = 1_000
DEFAULT_AI_MODEL = "gpt-4o-mini"
DEFAULT_SUPPORT_EMAIL = "support@example.com"
DEFAULT_RESERVATION_TTL_SECONDS = 15 * 60
DEFAULT_AI_REQUESTS_PER_MINUTE = 500
DEFAULT_AI_TOKENS_PER_MINUTE = 200_000
DEFAULT_AI_MAX_WAIT_SECONDS = 5.0
# No cap: hosted providers limit requests and tokens per minute, not calls in
# flight; a self-hosted server's number is its slots, which only its operator
# knows (docs/upstream-ai.md).
DEFAULT_AI_MAX_CONCURRENCY = 0
DEFAULT_REDIS_NAMESPACE = "taxonomist"
# Bulk jobs (shared/jobs): see docs/bulk-jobs.md.
DEFAULT_MAX_JOB_ITEMS = 100_000
DEFAULT_JOB_MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_JOB_RETENTION_DAYS = 30
DEFAULT_JOB_CHUNK_SIZE = 50
DEFAULT_JOB_CHUNKS_IN_FLIGHT = 4
DEFAULT_JOB_STALE_SECONDS = 300
DEFAULT_JOB_SWEEP_INTERVAL_SECONDS = 60
DEFAULT_JOB_DEADLINE_SECONDS = 24 * 3600
# Dashboard: addresses whose X-Forwarded-Proto / X-Forwarded-For are believed
# (uvicorn's forwarded_allow_ips); none by default.
DEFAULT_TRUSTED_PROXIES = ""
# Per client address, "per minute/per hour/per day" (docs/dashboard.md).
DEFAULT_SIGNIN_LIMITS_PER_ADDRESS = "30/300/1000"
DEFAULT_SIGNUP_LIMITS_PER_ADDRESS = "3/10/20"

AI_PROVIDERS = ("local", "openai")


class ConfigurationError(Exception):
    """A setting is missing or invalid; the message names the variable."""


def _limits(text: str) -> tuple[int, int, int]:
    """"5/20/50" as (per minute, per hour, per day), or ValueError."""
    parts = text.split("/")
    if len(parts) != 3 or not all(part.strip().isdigit() for part in parts):
        raise ValueError(f"{text!r} is not three whole numbers: per minute/per hour/per day.")
    per_minute, per_hour, per_day = (int(part) for part in parts)
    return per_minute, per_hour, per_day


@dataclass(frozen=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    # Empty broker URL means the embedded mode: in-memory broker, worker in-process.
    celery_broker_url: str = ""
    redis_url: str = ""
    # Prefix of every Redis key and Celery queue: deployments can share a Redis.
    redis_namespace: str = DEFAULT_REDIS_NAMESPACE
    taxonomy_dir: Path | None = None
    cache_dir: Path | None = None
    ai_provider: str = "local"
    openai_base_url: str | None = None
    openai_api_key: Secret = field(default_factory=lambda: Secret(""))
    ai_model: str = DEFAULT_AI_MODEL
    ai_timeout_seconds: float = DEFAULT_AI_TIMEOUT_SECONDS
    ai_attempts: int = DEFAULT_AI_ATTEMPTS
    ai_total_seconds: float = DEFAULT_AI_TOTAL_SECONDS
    ai_product_tokens: int = DEFAULT_AI_PRODUCT_TOKENS
    ai_requests_per_minute: int = DEFAULT_AI_REQUESTS_PER_MINUTE
    ai_tokens_per_minute: int = DEFAULT_AI_TOKENS_PER_MINUTE
    ai_max_wait_seconds: float = DEFAULT_AI_MAX_WAIT_SECONDS
    ai_max_concurrency: int = DEFAULT_AI_MAX_CONCURRENCY
    support_email: str = DEFAULT_SUPPORT_EMAIL
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    candidate_count: int = DEFAULT_CANDIDATE_COUNT
    local_confidence_threshold: float | None = None
    classify_timeout_seconds: float = DEFAULT_CLASSIFY_TIMEOUT_SECONDS
    reservation_ttl_seconds: int = DEFAULT_RESERVATION_TTL_SECONDS
    default_per_minute: int = DEFAULT_PER_MINUTE
    default_per_hour: int = DEFAULT_PER_HOUR
    default_per_day: int = DEFAULT_PER_DAY
    default_monthly_credits: int = DEFAULT_MONTHLY_CREDITS
    secret_key: Secret = field(default_factory=lambda: Secret(""))
    max_job_items: int = DEFAULT_MAX_JOB_ITEMS
    job_max_body_bytes: int = DEFAULT_JOB_MAX_BODY_BYTES
    job_retention_days: int = DEFAULT_JOB_RETENTION_DAYS
    job_chunk_size: int = DEFAULT_JOB_CHUNK_SIZE
    job_chunks_in_flight: int = DEFAULT_JOB_CHUNKS_IN_FLIGHT
    job_stale_seconds: int = DEFAULT_JOB_STALE_SECONDS
    job_sweep_interval_seconds: int = DEFAULT_JOB_SWEEP_INTERVAL_SECONDS
    job_deadline_seconds: int = DEFAULT_JOB_DEADLINE_SECONDS
    trusted_proxies: str = DEFAULT_TRUSTED_PROXIES
    signin_limits_per_address: tuple[int, int, int] = _limits(DEFAULT_SIGNIN_LIMITS_PER_ADDRESS)
    signup_limits_per_address: tuple[int, int, int] = _limits(DEFAULT_SIGNUP_LIMITS_PER_ADDRESS)

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
        config = Config(environ=dict(os.environ if environ is None else environ))
        taxonomy_dir = config("TAXONOMY_DIR", default=None)
        cache_dir = config("TAXONOMIST_CACHE_DIR", default=None)
        xdg_cache_home = config("XDG_CACHE_HOME", default=None)
        if not cache_dir and xdg_cache_home:
            cache_dir = str(Path(xdg_cache_home) / "taxonomist")
        threshold = config("LOCAL_CONFIDENCE_THRESHOLD", default=None)
        try:
            settings = cls(
                database_url=config("DATABASE_URL", default=DEFAULT_DATABASE_URL),
                celery_broker_url=config("CELERY_BROKER_URL", default=""),
                redis_url=config("REDIS_URL", default=""),
                redis_namespace=config("REDIS_NAMESPACE", default=DEFAULT_REDIS_NAMESPACE),
                taxonomy_dir=Path(taxonomy_dir) if taxonomy_dir else None,
                cache_dir=Path(cache_dir) if cache_dir else None,
                ai_provider=config("AI_PROVIDER", default="local"),
                openai_base_url=config("OPENAI_BASE_URL", default=None),
                openai_api_key=config("OPENAI_API_KEY", cast=Secret, default=""),
                ai_model=config("AI_MODEL", default=DEFAULT_AI_MODEL),
                ai_timeout_seconds=config(
                    "AI_TIMEOUT_SECONDS", cast=float, default=DEFAULT_AI_TIMEOUT_SECONDS
                ),
                ai_attempts=config("AI_ATTEMPTS", cast=int, default=DEFAULT_AI_ATTEMPTS),
                ai_total_seconds=config(
                    "AI_TOTAL_SECONDS", cast=float, default=DEFAULT_AI_TOTAL_SECONDS
                ),
                ai_product_tokens=config(
                    "AI_PRODUCT_TOKENS", cast=int, default=DEFAULT_AI_PRODUCT_TOKENS
                ),
                ai_requests_per_minute=config(
                    "AI_REQUESTS_PER_MINUTE", cast=int, default=DEFAULT_AI_REQUESTS_PER_MINUTE
                ),
                ai_tokens_per_minute=config(
                    "AI_TOKENS_PER_MINUTE", cast=int, default=DEFAULT_AI_TOKENS_PER_MINUTE
                ),
                ai_max_wait_seconds=config(
                    "AI_MAX_WAIT_SECONDS", cast=float, default=DEFAULT_AI_MAX_WAIT_SECONDS
                ),
                ai_max_concurrency=config(
                    "AI_MAX_CONCURRENCY", cast=int, default=DEFAULT_AI_MAX_CONCURRENCY
                ),
                support_email=config("SUPPORT_EMAIL", default=DEFAULT_SUPPORT_EMAIL),
                max_body_bytes=config("MAX_BODY_BYTES", cast=int, default=DEFAULT_MAX_BODY_BYTES),
                candidate_count=config(
                    "CANDIDATE_COUNT", cast=int, default=DEFAULT_CANDIDATE_COUNT
                ),
                local_confidence_threshold=float(threshold) if threshold else None,
                classify_timeout_seconds=config(
                    "CLASSIFY_TIMEOUT_SECONDS", cast=float, default=DEFAULT_CLASSIFY_TIMEOUT_SECONDS
                ),
                reservation_ttl_seconds=config(
                    "RESERVATION_TTL_SECONDS", cast=int, default=DEFAULT_RESERVATION_TTL_SECONDS
                ),
                default_per_minute=config("DEFAULT_PER_MINUTE", cast=int, default=DEFAULT_PER_MINUTE),
                default_per_hour=config("DEFAULT_PER_HOUR", cast=int, default=DEFAULT_PER_HOUR),
                default_per_day=config("DEFAULT_PER_DAY", cast=int, default=DEFAULT_PER_DAY),
                default_monthly_credits=config(
                    "DEFAULT_MONTHLY_CREDITS", cast=int, default=DEFAULT_MONTHLY_CREDITS
                ),
                secret_key=config("SECRET_KEY", cast=Secret, default=""),
                max_job_items=config("MAX_JOB_ITEMS", cast=int, default=DEFAULT_MAX_JOB_ITEMS),
                job_max_body_bytes=config(
                    "JOB_MAX_BODY_BYTES", cast=int, default=DEFAULT_JOB_MAX_BODY_BYTES
                ),
                job_retention_days=config(
                    "JOB_RETENTION_DAYS", cast=int, default=DEFAULT_JOB_RETENTION_DAYS
                ),
                job_chunk_size=config("JOB_CHUNK_SIZE", cast=int, default=DEFAULT_JOB_CHUNK_SIZE),
                job_chunks_in_flight=config(
                    "JOB_CHUNKS_IN_FLIGHT", cast=int, default=DEFAULT_JOB_CHUNKS_IN_FLIGHT
                ),
                job_stale_seconds=config(
                    "JOB_STALE_SECONDS", cast=int, default=DEFAULT_JOB_STALE_SECONDS
                ),
                job_sweep_interval_seconds=config(
                    "JOB_SWEEP_INTERVAL_SECONDS", cast=int, default=DEFAULT_JOB_SWEEP_INTERVAL_SECONDS
                ),
                job_deadline_seconds=config(
                    "JOB_DEADLINE_SECONDS", cast=int, default=DEFAULT_JOB_DEADLINE_SECONDS
                ),
                trusted_proxies=config("TRUSTED_PROXIES", default=DEFAULT_TRUSTED_PROXIES),
                signin_limits_per_address=config(
                    "SIGNIN_LIMITS_PER_ADDRESS",
                    cast=_limits,
                    default=DEFAULT_SIGNIN_LIMITS_PER_ADDRESS,
                ),
                signup_limits_per_address=config(
                    "SIGNUP_LIMITS_PER_ADDRESS",
                    cast=_limits,
                    default=DEFAULT_SIGNUP_LIMITS_PER_ADDRESS,
                ),
            )
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from exc
        if settings.ai_provider not in AI_PROVIDERS:
            raise ConfigurationError(
                f"AI_PROVIDER must be one of {', '.join(AI_PROVIDERS)}, not {settings.ai_provider!r}."
            )
        if settings.max_body_bytes < 1:
            raise ConfigurationError("MAX_BODY_BYTES must be a positive number of bytes.")
        if settings.ai_provider == "openai":
            settings.check_ai_budget()
        return settings

    def check_ai_budget(self) -> None:
        """The upstream AI's time budget holds one attempt and leaves the
        synchronous deadline room for the answer."""
        if self.ai_attempts < 1:
            raise ConfigurationError("AI_ATTEMPTS must be at least 1.")
        if self.ai_product_tokens < 1:
            raise ConfigurationError("AI_PRODUCT_TOKENS must be a positive number of tokens.")
        if self.ai_max_concurrency < 0:
            raise ConfigurationError(
                "AI_MAX_CONCURRENCY must be a whole number of calls in flight, or 0 for no cap."
            )
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
