"""The AI selector for any OpenAI-compatible Chat Completions endpoint.

Each call to the endpoint first takes its cost from the AI bucket (one
request, the prompt's estimated tokens plus the answer's maximum), so the
whole fleet stays under the provider's limits; the usage the provider
reports corrects the estimate. Then, when AI_MAX_CONCURRENCY caps the calls
in flight, it holds one of those slots for the length of the call (never
during a backoff, nor while it waits for the bucket).

Retries have one owner, tenacity, and a bounded total time per `select`:

    timeout, connection error, 5xx   exponential backoff with jitter
    429                              the bucket is paused for the wait the
                                     provider asked (Retry-After), for every
                                     worker; the next attempt waits it out
                                     in the bucket, or gives up at once
    400 "response_format" rejected   not a retry: the same attempt steps
                                     down to json_object, then plain, and
                                     the selector keeps that mode
    400 prompt over the context      not a retry: "no decision", so the
                                     fallback applies
    other 4xx                        no retry

The product text is cut to AI_PRODUCT_TOKENS first, so a long one fits a
small context; the 400 above is for servers smaller still.

What `select` raises (shared.ai.errors):

    AIError
    ├── AIRateLimited   the wait for capacity (our bucket, a slot under
    │                   AI_MAX_CONCURRENCY, or the provider's Retry-After)
    │                   is longer than max_wait or the time budget left, or
    │                   the last attempt was answered 429; carries
    │                   retry_after (for a slot: one call's timeout, by
    │                   which every call in flight has ended)
    └── AIUnavailable   the last attempt timed out, failed to connect or got
                        a 5xx; or the endpoint refused the request (4xx)

An answer that is null, not a candidate, or unreadable is not an error: it
is Decision(category_id=None), and it is not retried. An answer cut off at
the token limit (finish_reason "length") is logged, marked `truncated`, and
read all the same: a complete "categoryId" naming a candidate counts.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

import openai
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential_jitter,
)

from shared.ai.errors import AIUnavailable, AIRateLimited
from shared.ai.models import CallSlots, Decision
from shared.ai.prompt import (
    FALLBACK,
    MAX_ANSWER_TOKENS,
    ResponseMode,
    build_messages,
    cut_product,
    estimate_prompt_tokens,
    parse_answer,
    response_format,
)
from shared.ai.retry_after import retry_after_seconds
from shared.ai.bucket import AIBucket, make_ai_bucket
from shared.settings import ConfigurationError, Settings
from shared.taxonomy.models import Candidate

logger = logging.getLogger(__name__)

DEFAULT_BACKOFF_INITIAL_SECONDS = 0.5
DEFAULT_BACKOFF_MAX_SECONDS = 8.0
# When a 429 names no wait at all.
DEFAULT_RATE_LIMIT_PAUSE_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = Settings.ai_attempts
    total_seconds: float = Settings.ai_total_seconds
    backoff_initial_seconds: float = DEFAULT_BACKOFF_INITIAL_SECONDS
    backoff_max_seconds: float = DEFAULT_BACKOFF_MAX_SECONDS

    @classmethod
    def from_settings(cls, settings: Settings) -> "RetryPolicy":
        """AI_ATTEMPTS and AI_TOTAL_SECONDS: one policy for every caller."""
        return cls(attempts=settings.ai_attempts, total_seconds=settings.ai_total_seconds)


class _Transient(Exception):
    """A failure worth another attempt."""


class _UpstreamRateLimited(_Transient):
    def __init__(self, retry_after: float) -> None:
        super().__init__(f"upstream AI answered 429, retry after {retry_after:.2f}s")
        self.retry_after = retry_after


class _FormatRejected(Exception):
    """The endpoint does not support the response_format we sent."""


# Words of the 400s that refuse a response_format or its schema: OpenAI's
# ("Invalid schema for response_format ..."), llama.cpp's ("Unable to
# generate parser ... JSON schema error at ..."), vLLM's ("... not supported
# by xgrammar", "guided decoding").
_FORMAT_REJECTION_WORDS = (
    "response_format",
    "json_schema",
    "json_object",
    "json schema",
    "grammar",
    "unable to generate parser",
    "guided",
    "structured output",
)
# Words of the 400s for a prompt longer than the model's context: llama.cpp's
# ("exceeds the available context size"), OpenAI's and vLLM's ("maximum
# context length", code context_length_exceeded).
_CONTEXT_REJECTION_WORDS = ("context size", "context length", "context_length", "context window")


def _rejects_response_format(exc: openai.BadRequestError) -> bool:
    message = str(exc).lower()
    return any(word in message for word in _FORMAT_REJECTION_WORDS)


def _exceeds_context(exc: openai.BadRequestError) -> bool:
    message = str(exc).lower()
    return any(word in message for word in _CONTEXT_REJECTION_WORDS)


class OpenAISelector:
    """Implements shared.ai.models.Selector; build one per process and keep it."""

    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        bucket: AIBucket,
        *,
        timeout_seconds: float,
        max_wait_seconds: float,
        retry: RetryPolicy = RetryPolicy(),
        product_tokens: int = Settings.ai_product_tokens,
        call_slots: CallSlots | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.bucket = bucket
        self.timeout_seconds = timeout_seconds
        self.max_wait_seconds = max_wait_seconds
        self.retry = retry
        self.product_tokens = product_tokens
        # None: no cap on calls in flight (AI_MAX_CONCURRENCY=0).
        self.call_slots = call_slots
        self._backoff = wait_exponential_jitter(
            multiplier=retry.backoff_initial_seconds,
            max=retry.backoff_max_seconds,
            jitter=retry.backoff_initial_seconds,
        )
        # Learned from the endpoint's 400s; only ever moves down FALLBACK.
        self.response_mode = ResponseMode.JSON_SCHEMA

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        bucket: AIBucket | None = None,
        max_wait_seconds: float | None = None,
        retry: RetryPolicy | None = None,
        call_slots: CallSlots | None = None,
    ) -> "OpenAISelector":
        """`max_wait_seconds` defaults to AI_MAX_WAIT_SECONDS, the synchronous
        requests' bound; bulk callers pass a longer one. `retry` defaults to
        the settings' policy (AI_ATTEMPTS, AI_TOTAL_SECONDS). `call_slots`
        is the AI_MAX_CONCURRENCY cap (shared.ratelimit.concurrency's
        `make_call_slots(settings)`); None sends calls uncapped."""
        api_key = str(settings.openai_api_key)
        if not api_key:
            raise ConfigurationError("OPENAI_API_KEY is not set (AI_PROVIDER=openai needs it).")
        # max_retries=0: tenacity here is the only retry layer.
        client = openai.OpenAI(
            api_key=api_key,
            base_url=settings.openai_base_url or None,
            timeout=settings.ai_timeout_seconds,
            max_retries=0,
        )
        return cls(
            client,
            settings.ai_model,
            bucket if bucket is not None else make_ai_bucket(settings),
            timeout_seconds=settings.ai_timeout_seconds,
            max_wait_seconds=(
                settings.ai_max_wait_seconds if max_wait_seconds is None else max_wait_seconds
            ),
            retry=retry if retry is not None else RetryPolicy.from_settings(settings),
            product_tokens=settings.ai_product_tokens,
            call_slots=call_slots,
        )

    def select(
        self,
        product: str,
        candidates: Sequence[Candidate],
        custom_instructions: str | None,
    ) -> Decision:
        if not candidates:
            return Decision(category_id=None)
        messages = build_messages(
            cut_product(product, self.product_tokens), candidates, custom_instructions
        )
        deadline = time.monotonic() + self.retry.total_seconds
        retrying = Retrying(
            retry=retry_if_exception_type(_Transient),
            wait=self._wait,
            stop=stop_after_attempt(self.retry.attempts)
            | stop_before_delay(self.retry.total_seconds),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return retrying(self._attempt, messages, candidates, deadline)
        except _UpstreamRateLimited as exc:
            raise AIRateLimited(retry_after=exc.retry_after) from exc
        except _Transient as exc:
            raise AIUnavailable(f"upstream AI failed after retries: {exc}") from exc

    def _wait(self, retry_state: RetryCallState) -> float:
        # After a 429 the bucket is paused: the next attempt waits there,
        # bounded by max_wait, together with every other worker.
        assert retry_state.outcome is not None  # tenacity waits after an attempt
        if isinstance(retry_state.outcome.exception(), _UpstreamRateLimited):
            return 0.0
        return self._backoff(retry_state)

    @staticmethod
    def _log_retry(retry_state: RetryCallState) -> None:
        assert retry_state.outcome is not None  # tenacity logs after an attempt
        logger.warning(
            "upstream AI attempt %d failed (%s); retrying in %.2fs",
            retry_state.attempt_number,
            retry_state.outcome.exception(),
            retry_state.upcoming_sleep,
        )

    def _capacity_wait(self, deadline: float) -> float:
        """How long this attempt may wait for capacity: max_wait, within the budget."""
        return max(0.0, min(self.max_wait_seconds, deadline - time.monotonic()))

    @contextmanager
    def _call_slot(self, deadline: float) -> Iterator[None]:
        """Hold one of the AI_MAX_CONCURRENCY slots for the length of a call."""
        if self.call_slots is None:
            yield
            return
        lease = self.call_slots.acquire(self._capacity_wait(deadline))
        if lease is None:
            # As for the bucket: the fleet is at capacity, which is a rate
            # limit of ours (429 and no credit taken, or the chunk re-queued),
            # not a failure of the upstream.
            raise AIRateLimited(retry_after=self.timeout_seconds)
        try:
            yield
        finally:
            self.call_slots.release(lease)

    def _attempt(
        self, messages: list[dict[str, str]], candidates: Sequence[Candidate], deadline: float
    ) -> Decision:
        """One attempt; steps down the response modes the endpoint rejects."""
        while True:  # bounded: each pass moves down FALLBACK, which ends
            mode = self.response_mode
            try:
                return self._send(messages, candidates, mode, deadline)
            except _FormatRejected:
                self.response_mode = FALLBACK[mode]
                logger.info(
                    "upstream AI rejects response_format %s; using %s from now on",
                    mode.value,
                    self.response_mode.value,
                )

    def _send(
        self,
        messages: list[dict[str, str]],
        candidates: Sequence[Candidate],
        mode: ResponseMode,
        deadline: float,
    ) -> Decision:
        estimated = estimate_prompt_tokens(messages) + MAX_ANSWER_TOKENS
        self.bucket.acquire(estimated, max_wait=self._capacity_wait(deadline))
        extra = {}
        format_argument = response_format(mode, candidates)
        if format_argument is not None:
            extra["response_format"] = format_argument
        with self._call_slot(deadline):
            timeout = min(self.timeout_seconds, deadline - time.monotonic())
            if timeout <= 0:
                raise _Transient("time budget spent before the call")
            try:
                # Messages are plain dicts, the shape of the SDK's TypedDicts.
                completion = self.client.chat.completions.create(  # type: ignore[call-overload]
                    model=self.model,
                    messages=messages,
                    temperature=0,
                    max_tokens=MAX_ANSWER_TOKENS,
                    timeout=timeout,
                    **extra,
                )
            except openai.RateLimitError as exc:
                retry_after = retry_after_seconds(exc.response.headers)
                if retry_after is None:
                    retry_after = DEFAULT_RATE_LIMIT_PAUSE_SECONDS
                self.bucket.pause(retry_after)
                raise _UpstreamRateLimited(retry_after) from exc
            except openai.BadRequestError as exc:
                if _exceeds_context(exc):
                    logger.warning("upstream AI refused a prompt over its context; no decision")
                    return Decision(category_id=None)
                if mode in FALLBACK and _rejects_response_format(exc):
                    raise _FormatRejected() from exc
                raise AIUnavailable(f"upstream AI refused the request ({exc.status_code})") from exc
            except (openai.APIConnectionError, openai.InternalServerError) as exc:
                # APITimeoutError is an APIConnectionError.
                raise _Transient(type(exc).__name__) from exc
            except openai.APIStatusError as exc:
                raise AIUnavailable(f"upstream AI refused the request ({exc.status_code})") from exc
        usage = completion.usage
        prompt_tokens = usage.prompt_tokens if usage else 0
        completion_tokens = usage.completion_tokens if usage else 0
        if usage:
            self.bucket.settle(estimated, prompt_tokens + completion_tokens)
        # The record of what each call cost (no product text: it is the customer's).
        logger.info(
            "upstream AI call: %d prompt + %d completion tokens (%s)",
            prompt_tokens,
            completion_tokens,
            mode.value,
        )
        choice = completion.choices[0] if completion.choices else None
        answer = parse_answer(choice.message.content if choice else None, candidates)
        truncated = choice is not None and choice.finish_reason == "length"
        if truncated:
            logger.warning(
                "upstream AI answer cut off at %d tokens (finish_reason=length); %s",
                MAX_ANSWER_TOKENS,
                "a candidate was read from it" if answer.category_id else "no decision",
            )
        return Decision(
            category_id=answer.category_id,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            invalid=not answer.valid,
            truncated=truncated,
        )
