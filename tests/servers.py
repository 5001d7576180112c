"""Real processes on loopback for the tests: `taxonomist serve`, `taxonomist worker`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

STARTUP_TIMEOUT_SECONDS = 180
REDIS_STARTUP_TIMEOUT_SECONDS = 10


def session_pids(session_id: int) -> list[int]:
    """The live processes of a session: a `Process` and everything it started."""
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                # After the command name, which may hold spaces: the session is field 6.
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session_id:
            pids.append(int(entry.name))
    return pids


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Process:
    """A `taxonomist` subprocess (or another module's: `celery`) whose output goes to a log file."""

    def __init__(
        self, args: list[str], env: dict[str, str], log_path: Path, module: str = "cli.main"
    ) -> None:
        self.args = args
        self.env = env
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.popen = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, sig)
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=10)
        self._log.close()


class Service(Process):
    """`taxonomist serve` on a free port, ready when /healthz answers."""

    def __init__(self, env: dict[str, str], log_path: Path, extra_args: list[str] = ()) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        super().__init__(
            ["serve", "--host", "127.0.0.1", "--port", str(self.port), *extra_args], env, log_path
        )
        self.wait_healthy()

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"serve exited early:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"serve did not become healthy:\n{self.log()}")


def run_cli(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class RedisServer:
    """A private `redis-server` on a free port, for tests that stop and restart Redis.

    Nothing is persisted: a restart loses every key and queued task, as a
    crashed Redis without persistence does.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.popen: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.popen = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + REDIS_STARTUP_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(timeout=10)


class StallingProxy:
    """A TCP proxy on loopback that can stall: it keeps its connections open and
    accepts new ones, but forwards nothing until `resume()` (a database that
    accepts connections and answers nothing)."""

    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.flowing = threading.Event()
        self.flowing.set()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def stall(self) -> None:
        self.flowing.clear()

    def resume(self) -> None:
        self.flowing.set()

    def close(self) -> None:
        self.flowing.set()
        self.listener.close()
        for sock in self.sockets:
            sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
                upstream = socket.create_connection(self.target)
            except OSError:
                return
            self.sockets += [client, upstream]
            for source, destination in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, destination), daemon=True).start()

    def _pump(self, source: socket.socket, destination: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self.flowing.wait()
                destination.sendall(data)
        except OSError:
            pass
        finally:
            destination.close()
