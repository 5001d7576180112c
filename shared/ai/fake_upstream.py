"""A fake OpenAI Chat Completions server, for tests, the bench and by hand.

It speaks enough of POST /v1/chat/completions for the `openai` client and
answers {"categoryId": <the first candidate listed in the prompt>} with a
usage block. It can be told to:

- enforce its own requests-per-minute limit (429 with Retry-After);
- add latency to every answer;
- reject response_format json_schema with a 400 (OpenAI's message, or
  another server's);
- answer the next requests from a script, one reply each:
  "first", "null", "id:<any id>", "malformed", "500", "hang", "429:<seconds>",
  "cutoff" (the first candidate padded with whitespace and cut off before
  the closing brace, finish_reason "length", as a small self-hosted model
  under JSON-constrained decoding), "context" (llama.cpp's 400 for a prompt
  over its context).

It counts what it received and answered (`stats`, also GET /fake/stats),
the most requests it held at once (`max_in_flight`, the check of
AI_MAX_CONCURRENCY) and keeps each request's arrival time and body
(`received`).

    taxonomist fake-upstream --port 8099 --rpm 600 --latency-ms 50
"""

from __future__ import annotations

import argparse
import json
import math
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8099
# The provider's tolerance for bursts: one second of its rate, twice the
# bucket's default, as a provider enforcing a per-minute limit per second.
DEFAULT_BURST_SECONDS = 1.0
# A "hang" outlasts any client timeout; stop() releases it.
HANG_SECONDS = 60.0
COMPLETIONS_PATH = "/v1/chat/completions"
STATS_PATH = "/fake/stats"
CHARS_PER_TOKEN = 4

# Candidate lines of shared.ai.prompt: "N. <id> - <path>".
_CANDIDATE_LINE = re.compile(r"^\d+\. (\S+) - ", re.MULTILINE)
_REPLY = re.compile(r"first|null|id:\S+|malformed|500|hang|429:\d+(\.\d+)?|cutoff|context")
OPENAI_SCHEMA_ERROR = "response_format of type json_schema is not supported with this model"
# llama.cpp's server (tools/server) for a prompt longer than its slot's context.
LLAMACPP_CONTEXT_ERROR = (
    "request (9000 tokens) exceeds the available context size (8192 tokens), "
    "try increasing it"
)
# Whitespace a constrained decoder may emit between JSON tokens.
_PADDING = "\n\t \t "


@dataclass
class Received:
    at: float  # time.monotonic() on arrival
    body: dict


@dataclass
class RequestLimit:
    """Generic cell rate algorithm: a token bucket told as the theoretical
    arrival time of the next request (written apart from our own bucket, so
    that the fake checks it rather than shares its mistakes)."""

    requests_per_minute: int
    burst_seconds: float
    _next_at: float = 0.0

    def admit(self, now: float) -> float:
        """0.0 and counts the request, or the seconds to wait before one fits."""
        interval = 60.0 / self.requests_per_minute
        burst = max(1.0, self.burst_seconds * self.requests_per_minute / 60.0)
        tolerance = (burst - 1) * interval
        next_at = max(self._next_at, now)
        if next_at - now > tolerance:
            return next_at - now - tolerance
        self._next_at = next_at + interval
        return 0.0


@dataclass
class FakeState:
    latency_ms: float = 0.0
    reject_json_schema: bool = False
    schema_error: str = OPENAI_SCHEMA_ERROR
    limit: RequestLimit | None = None
    script: deque[str] = field(default_factory=deque)
    received: list[Received] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    stats: dict[str, int] = field(
        default_factory=lambda: {"received": 0, "answered": 0, "rate_limited": 0, "errors": 0}
    )


def _content(reply: str, candidates: list[str]) -> str:
    if reply == "malformed":
        return "I would pick the first one, probably."
    if reply == "null" or not candidates:
        return json.dumps({"categoryId": None})
    if reply.startswith("id:"):
        return json.dumps({"categoryId": reply[3:]})
    if reply == "cutoff":
        return "{" + _PADDING * 3 + f'"categoryId": "{candidates[0]}"' + _PADDING * 8
    return json.dumps({"categoryId": candidates[0]})


def _completion(body: dict, content: str, finish_reason: str = "stop") -> dict:
    prompt_chars = sum(len(str(message.get("content", ""))) for message in body["messages"])
    prompt_tokens = math.ceil(prompt_chars / CHARS_PER_TOKEN)
    completion_tokens = math.ceil(len(content) / CHARS_PER_TOKEN)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _error(message: str, kind: str) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects
    # Headers and body go out in two writes; with Nagle on, the second waits
    # for the client's delayed ACK (40 ms a request).
    disable_nagle_algorithm = True
    server: "_Server"

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line a request would drown the tests' output

    def _send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a "hang" past its timeout)

    def do_GET(self) -> None:
        if self.path != STATS_PATH:
            self._send_json(404, _error("not found", "not_found"))
            return
        self._send_json(200, self.server.fake.stats)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        if self.path != COMPLETIONS_PATH:
            self._send_json(404, _error("not found", "not_found"))
            return
        status, payload, headers = self.server.fake.handle(json.loads(raw))
        self._send_json(status, payload, headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a hanging handler must not hold up stop()
    fake: "FakeUpstream"


class FakeUpstream:
    """The server; `start()` runs it in a thread, `serve_forever()` in this one."""

    def __init__(
        self,
        host: str = DEFAULT_HOST,
        port: int = 0,
        *,
        rpm: int | None = None,
        burst_seconds: float = DEFAULT_BURST_SECONDS,
        latency_ms: float = 0.0,
        reject_json_schema: bool = False,
        schema_error: str = OPENAI_SCHEMA_ERROR,
    ) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.state = FakeState()
        self.configure(
            rpm=rpm,
            burst_seconds=burst_seconds,
            latency_ms=latency_ms,
            reject_json_schema=reject_json_schema,
            schema_error=schema_error,
        )
        self._server = _Server((host, port), _Handler)
        self._server.fake = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL for the openai client (OPENAI_BASE_URL)."""
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET address: (host, port)
        return f"http://{host}:{port}/v1"

    def configure(
        self,
        *,
        rpm: int | None = None,
        burst_seconds: float = DEFAULT_BURST_SECONDS,
        latency_ms: float = 0.0,
        reject_json_schema: bool = False,
        schema_error: str = OPENAI_SCHEMA_ERROR,
    ) -> None:
        """Set the behaviour, and forget the script, the counts and the log.
        `schema_error` is the message of the 400 that rejects json_schema."""
        with self._lock:
            self.state = FakeState(
                latency_ms=latency_ms,
                reject_json_schema=reject_json_schema,
                schema_error=schema_error,
                limit=RequestLimit(rpm, burst_seconds) if rpm else None,
            )

    def script(self, *replies: str) -> None:
        """Answer the next requests with these replies, in order."""
        for reply in replies:
            if not _REPLY.fullmatch(reply):
                raise ValueError(f"unknown scripted reply {reply!r}; known: {_REPLY.pattern}")
        with self._lock:
            self.state.script.extend(replies)

    @property
    def stats(self) -> dict[str, int]:
        with self._lock:
            return dict(self.state.stats)

    @property
    def max_in_flight(self) -> int:
        """The most requests it held at once since `configure()`."""
        with self._lock:
            return self.state.max_in_flight

    @property
    def received(self) -> list[Received]:
        with self._lock:
            return list(self.state.received)

    def handle(self, body: dict) -> tuple[int, dict, dict[str, str]]:
        """Status, JSON payload and headers for one chat completion request."""
        with self._lock:
            state = self.state
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            return self._answer(body)
        finally:
            with self._lock:
                state.in_flight -= 1

    def _answer(self, body: dict) -> tuple[int, dict, dict[str, str]]:
        now = time.monotonic()
        with self._lock:
            state = self.state
            state.received.append(Received(now, body))
            state.stats["received"] += 1
            # The limit stands in front of the script, as a provider's would.
            wait = state.limit.admit(now) if state.limit else 0.0
            if wait:
                reply = f"429:{wait}"
            else:
                reply = state.script.popleft() if state.script else "first"
        if reply.startswith("429:"):
            return self._rate_limited(float(reply[4:]))
        self._stopping.wait(state.latency_ms / 1000)
        if reply == "hang":
            self._stopping.wait(HANG_SECONDS)
        if reply in ("500", "hang"):
            return self._count("errors", 500, _error("the fake failed, as scripted", "server_error"))
        response_format = body.get("response_format") or {}
        if state.reject_json_schema and response_format.get("type") == "json_schema":
            return self._count("errors", 400, _error(state.schema_error, "invalid_request_error"))
        if reply == "context":
            error = _error(LLAMACPP_CONTEXT_ERROR, "exceed_context_size_error")
            return self._count("errors", 400, error)
        candidates = _CANDIDATE_LINE.findall(body["messages"][-1]["content"])
        finish_reason = "length" if reply == "cutoff" else "stop"
        completion = _completion(body, _content(reply, candidates), finish_reason)
        return self._count("answered", 200, completion)

    def _count(self, stat: str, status: int, payload: dict, headers: dict[str, str] | None = None):
        with self._lock:
            self.state.stats[stat] += 1
        return status, payload, headers or {}

    def _rate_limited(self, seconds: float) -> tuple[int, dict, dict[str, str]]:
        headers = {
            "Retry-After": str(math.ceil(seconds)),
            "retry-after-ms": str(math.ceil(seconds * 1000)),
        }
        payload = _error("Rate limit reached for requests", "requests")
        return self._count("rate_limited", 429, payload, headers)

    def start(self) -> "FakeUpstream":
        self._thread = threading.Thread(target=self.serve_forever, name="fake-upstream", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=0.1)

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> "FakeUpstream":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fake-upstream", help="Run a fake OpenAI-compatible endpoint (for tests and benches)."
    )
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--rpm", type=int, default=None, help="Its own requests-per-minute limit.")
    parser.add_argument("--burst-seconds", type=float, default=DEFAULT_BURST_SECONDS)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--reject-json-schema", action="store_true")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    fake = FakeUpstream(
        args.host,
        args.port,
        rpm=args.rpm,
        burst_seconds=args.burst_seconds,
        latency_ms=args.latency_ms,
        reject_json_schema=args.reject_json_schema,
    )
    print(f"fake upstream on {fake.url} (stats: GET {STATS_PATH}); Ctrl-C stops it", flush=True)
    try:
        fake.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
    return 0
