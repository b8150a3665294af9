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


def test_a_reply_that_is_not_utf8_is_judged_not_lost(server, token):
    """A lone surrogate in a reply's prose made httpx raise out of map(): the whole batch was lost."""
    reply = f"Here is my kernel \udc80:\n```python\n{GOOD}\n```\n"
    with RemoteEvaluator(server.url, token, timeout=300, poll_s=5) as remote:
        results = remote.map([(PROBLEM, reply), (PROBLEM, DECOY)])
    assert [r.status for r in results] == ["correct", "hacked"]


def test_an_answer_judged_before_sending_gets_the_feedback_evaluate_gives():
    """Decided locally (no ModelNew): nothing is sent, and the result is the one ``evaluate`` returns, feedback
    included (a multi-turn trainer's next turn reads it; it was empty)."""
    from drk.gym import evaluate

    bad = example_candidate("no_model_new")
    with RemoteEvaluator("http://127.0.0.1:9", "x" * 16, timeout=5, retry_s=1) as remote:  # nothing listens there
        remote_result = remote.evaluate(PROBLEM, bad)
    local = evaluate(PROBLEM, bad, device="cpu")
    assert remote_result.status == local.status == "format_error"
    assert remote_result.feedback and remote_result.feedback == local.feedback


def test_refused_tasks_and_network_failures_are_env_errors(server, token):
    with RemoteEvaluator(server.url, token, timeout=120, poll_s=2) as remote:
        results = remote.map([(PROBLEM, "#" * 60_000), (PROBLEM, SYNTAX_ERROR + "\n# remote"),
                              (PROBLEM, GOOD + "\n#" + "x" * 60_000), (PROBLEM, "```python\n" + "#" * 300_000)])
    # what evaluate() decides before any judge is decided before sending, and an answer too long for the server is
    # the candidate's: sent, both were the server's refusal, an uncharged env_error (attacker review 7)
    assert results[0].status == "format_error" and "ModelNew" in results[0].error
    assert results[1].status == "compile_error" and not results[1].env_error
    assert results[2].status == "format_error" and not results[2].env_error and "50000" in results[2].error
    assert results[3].status == "format_error" and "limit" in results[3].error
    assert all(r.problem == PROBLEM.name for r in results)

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


def _fake_server(answer_batch, answer_one=None):
    """An httpx client whose 'server' answers every batch with ``answer_batch(task_ids)`` -> (status, body)."""
    import json

    import httpx

    def handler(request):
        body = json.loads(request.content or b"{}")
        if request.url.path.endswith("/evaluate/batch"):
            status, payload = answer_batch([t["task_id"] for t in body["tasks"]])
        else:
            status, payload = (answer_one or answer_batch)([body["task_id"]])
        content = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        return httpx.Response(status, content=content, headers={"content-type": "application/json"})

    return httpx.Client(transport=httpx.MockTransport(handler))


def test_a_task_refused_for_its_problem_is_that_pairs_env_error_not_a_token_error():
    """The server answers 403 for a problem not on its --problems list: the client read every 403 as a refused
    token and raised, losing the batch (attacker review, 2026-12-02)."""
    refuse = lambda ids: (403, {"detail": "tasks[0].reference_code is not one of this server's problems"})  # noqa: E731
    with RemoteEvaluator("http://evil", "t", timeout=10, retry_s=1, client=_fake_server(refuse)) as remote:
        results = remote.map([(PROBLEM, GOOD), (PROBLEM, DECOY)])
    assert all(r.env_error and "HTTP 403" in r.error and "not one of this server's problems" in r.error
               for r in results)


@pytest.mark.parametrize("answer", [
    lambda ids: (200, {"results": [1, None, {"task_id": ["unhashable"]}]}),
    lambda ids: (200, {"results": [{"task_id": i, "status": "completed", "metadata": [1]} for i in ids]}),
    lambda ids: (200, {"results": [{"task_id": i, "status": "completed", "metadata": {"status": {}}} for i in ids]}),
    lambda ids: (200, b"[" * 100_000 + b"]" * 100_000),
    lambda ids: (200, b"not json"),
])
def test_a_malformed_server_answer_is_an_env_error_never_an_exception(answer):
    """A malicious or broken server (or proxy) made map raise AttributeError, TypeError, JSONDecodeError or
    RecursionError (attacker review, 2026-12-02): every pair is an env_error instead."""
    with RemoteEvaluator("http://evil", "t", timeout=3, retry_s=1, poll_s=0, client=_fake_server(answer)) as remote:
        results = remote.map([(PROBLEM, GOOD), (PROBLEM, DECOY)])
    assert [r.status for r in results] == ["runtime_error"] * 2 and all(r.env_error for r in results)


def test_text_only_verdicts_are_decided_by_one_function_for_every_evaluator():
    """``decided_without_judge`` is what evaluate() and RemoteEvaluator both use before any judge: the same status,
    error and feedback, and None for a source only a judge can decide."""
    from drk.gym import decided_without_judge, evaluate

    for name in ("no_model_new", "syntax_error"):
        source = example_candidate(name)
        early, full = decided_without_judge(PROBLEM, source, device="x"), evaluate(PROBLEM, source, device="cpu")
        assert early is not None and early.status == full.status != "correct"
        assert (early.error, early.feedback, early.problem) == (full.error, full.feedback, full.problem)
        assert early.device == "x" and early.reference_mode == full.reference_mode
    assert decided_without_judge(PROBLEM, example_candidate("decoy")) is None
