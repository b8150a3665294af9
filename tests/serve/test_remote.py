"""``drk.gym.RemoteEvaluator``: Pool's interface answered by a real ``drk serve``; network failures and refused
tasks become ``env_error`` results, never a lost batch."""

import socket
import time

import pytest

from drk.examples import example_candidate, example_problem
from drk.gym import EvalResult, RemoteEvaluator
from drk.gym.remote import RemoteError

pytest.importorskip("httpx")

PROBLEM = example_problem("relu2")
GOOD, DECOY, SYNTAX_ERROR = (example_candidate(n) for n in ("good", "decoy", "syntax_error"))


def test_map_and_evaluate_against_the_server(server, token):
    reply = f"Here is my kernel:\n```python\n{GOOD}\n```\n"
    pairs = [(PROBLEM, GOOD), (PROBLEM, DECOY), (PROBLEM, GOOD), (PROBLEM, SYNTAX_ERROR), (PROBLEM, reply)]
    with RemoteEvaluator(server.url, token, timeout=300, batch_size=2, poll_s=5) as remote:
        assert remote.health()["status"] == "ok"
        results = remote.map(pairs)
        single = remote.evaluate(PROBLEM, example_candidate("no_model_new"))
    assert all(isinstance(r, EvalResult) for r in results)
    assert [r.status for r in results] == ["correct", "hacked", "correct", "compile_error", "correct"]
    assert "decoy" in results[1].hack_reasons and all(r.problem == PROBLEM.name for r in results)
    assert results[0] is results[2]  # identical pairs are judged once, like Pool.map
    assert single.status == "format_error" and not single.env_error


def test_refused_tasks_and_network_failures_are_env_errors(server, token):
    with RemoteEvaluator(server.url, token, timeout=120, poll_s=2) as remote:
        results = remote.map([(PROBLEM, "#" * 60_000), (PROBLEM, SYNTAX_ERROR + "\n# remote")])
    assert results[0].env_error and results[0].status == "runtime_error" and "HTTP 413" in results[0].error
    assert results[1].status == "compile_error" and not results[1].env_error

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    start = time.monotonic()
    with RemoteEvaluator(f"http://127.0.0.1:{port}", token, timeout=60, retry_s=1.0) as remote:
        down = remote.map([(PROBLEM, GOOD), (PROBLEM, DECOY)])
    assert time.monotonic() - start < 30
    assert [r.status for r in down] == ["runtime_error"] * 2 and all(r.env_error for r in down)
    assert "ConnectError" in down[0].error and down[0].problem == PROBLEM.name

    with RemoteEvaluator(server.url, "wrong-token-0000", timeout=60) as remote, pytest.raises(RemoteError, match="401"):
        remote.map([(PROBLEM, GOOD)])
