"""A real ``drk serve`` process on 127.0.0.1 (a free port, ``--device cpu``) for the service tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

TOKEN = "serve-test-token-0123456789"
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``python -m drk serve`` in its own session (so its process group can be ended at teardown)."""

    def __init__(self, workdir: Path, *args: str, db: Path | None = None) -> None:
        self.workdir = workdir
        self.db = db or workdir / "serve.sqlite"
        self.args = args
        self.log = workdir / "server.log"
        self.proc: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, ready_s: float = 90.0) -> Server:
        import httpx

        self.port = free_port()
        cmd = [sys.executable, "-m", "drk", "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--device", "cpu", "--db", str(self.db), "--log-level", "warning", *self.args]
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                         env={**os.environ, "DRK_SERVE_TOKEN": TOKEN})
        deadline = time.monotonic() + ready_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"drk serve exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"drk serve did not answer /health in {ready_s} s:\n{self.log_tail()}")

    def kill9(self) -> None:
        """SIGKILL the server process only (what a crash or the OOM killer does)."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self._end_group()

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._end_group()

    def _end_group(self) -> None:
        """End what the server left in its process group (its forkserver); judges have sessions of their own."""
        assert self.proc is not None
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def client(self, token: str | None = TOKEN):
        import httpx

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=300)

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text()[-n:] if self.log.exists() else ""


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """One shared server: 2 workers, a result cache, small limits (1 MiB bodies, 50,000-character code)."""
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    workdir = tmp_path_factory.mktemp("serve")
    srv = Server(workdir, "--workers", "2", "--max-body-mb", "1", "--max-code-chars", "50000",
                 "--cache-dir", str(workdir / "cache")).start()
    yield srv
    srv.stop()


@pytest.fixture
def make_server(tmp_path):
    """Start extra servers with their own settings; all are stopped at the end of the test."""
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    started: list[Server] = []

    def make(*args: str, db: Path | None = None) -> Server:
        srv = Server(tmp_path, *args, db=db).start()
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()


@pytest.fixture
def token() -> str:
    """The bearer token the test servers accept."""
    return TOKEN
