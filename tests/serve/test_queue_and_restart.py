"""The bounded queue (429), and a server killed with SIGKILL mid-batch: restarted on the same database, every task
finishes exactly once (finished results kept, the interrupted one run again, the queued ones run)."""

import time

import pytest

from drk.cli import main
from drk.examples import example_candidate, example_problem

httpx = pytest.importorskip("httpx")

REFERENCE = example_problem("relu2").source
GOOD, SYNTAX_ERROR = example_candidate("good"), example_candidate("syntax_error")


def task(task_id, kernel):
    return {"task_id": task_id, "reference_code": REFERENCE, "kernel_code": kernel}


def wait_for(client, task_id, state, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = client.get(f"/results/{task_id}").json()
        if answer["status"] in state:
            return answer
        time.sleep(0.05)
    raise AssertionError(f"{task_id} never reached {state}: {answer['status']}")


def test_full_queue_answers_429(make_server):
    server = make_server("--workers", "1", "--max-queue", "1")
    with server.client() as client:
        slow = client.post("/evaluate", json=task("q-slow", GOOD), params={"wait": "false"})
        assert slow.status_code == 202 and slow.json()["status"] in ("queued", "running")
        full = client.post("/evaluate", json=task("q-next", SYNTAX_ERROR))
        assert full.status_code == 429 and "queue full" in full.json()["detail"]
        assert full.headers["retry-after"] == "5"
        assert client.post("/evaluate", json=task("q-slow", GOOD), params={"wait": "false"}).status_code == 202
        too_big = client.post("/evaluate/batch", json={"tasks": [task("q-a", SYNTAX_ERROR), task("q-b", SYNTAX_ERROR)]})
        assert too_big.status_code == 413 and "split the batch" in too_big.json()["detail"]
        assert client.get("/results/q-next").status_code == 404  # refused means not stored
        assert client.get("/results/q-slow", params={"wait_s": 120}).json()["metadata"]["drk_status"] == "correct"
        assert client.post("/evaluate", json=task("q-next", SYNTAX_ERROR)).json()["status"] == "completed"


def test_sigkill_mid_batch_then_restart_finishes_every_task_once(make_server, tmp_path):
    db = tmp_path / "restart.sqlite"
    server = make_server("--workers", "1", db=db)
    kernels = [SYNTAX_ERROR + "\n# a", SYNTAX_ERROR + "\n# b", GOOD, SYNTAX_ERROR + "\n# c", SYNTAX_ERROR + "\n# d"]
    batch = {"batch_id": "k9", "tasks": [{"reference_code": REFERENCE, "kernel_code": k} for k in kernels]}
    ids = [f"k9-{i}" for i in range(len(kernels))]
    with server.client() as client:
        assert client.post("/evaluate/batch", json=batch).status_code == 202
        wait_for(client, "k9-2", ("running",))  # one worker, FIFO: a and b are done, c and d wait behind it
        before = {t: client.get(f"/results/{t}").json() for t in ids}
    server.kill9()
    assert [before[t]["status"] for t in ids] == ["completed", "completed", "running", "queued", "queued"]

    restarted = make_server("--workers", "1", db=db)
    with restarted.client() as client:
        after = {t: wait_for(client, t, ("completed", "failed")) for t in ids}
        assert [after[t]["metadata"]["drk_status"] for t in ids] == ["compile_error"] * 2 + ["correct"] + [
            "compile_error"] * 2
        for t in ("k9-0", "k9-1"):  # finished before the kill: served as they were, not judged again
            assert after[t] == before[t]
        assert [after[t]["metadata"]["drk_serve"]["attempts"] for t in ids] == [1, 1, 2, 1, 1]
        again = client.post("/evaluate/batch", json=batch).json()["results"]  # re-sending the batch adds nothing
        assert [a["status"] for a in again] == ["completed"] * 5
        assert client.get("/health").json()["tasks"] == {"queued": 0, "running": 0, "completed": 5, "failed": 0}


def test_serve_refuses_to_start_without_a_token_or_device(monkeypatch, capsys):
    pytest.importorskip("fastapi")
    monkeypatch.delenv("DRK_SERVE_TOKEN", raising=False)
    assert main(["serve", "--port", "1", "--device", "cpu"]) == 2
    assert "token" in capsys.readouterr().err
    assert main(["serve", "--token", "short"]) == 2
    import torch

    if not torch.cuda.is_available():
        assert main(["serve", "--token", "long-enough-token", "--device", "cuda"]) == 2
        assert "no GPU is visible" in capsys.readouterr().err


def test_the_task_store_is_readable_by_its_owner_only(tmp_path):
    """It holds every client's candidates and results; sandboxed candidates can read world-readable host files."""
    import stat

    from drk.serve.store import TaskStore

    TaskStore(tmp_path / "tasks.sqlite")
    assert stat.S_IMODE((tmp_path / "tasks.sqlite").stat().st_mode) == 0o600


def test_counts_by_state_read_an_index_not_every_row(tmp_path):
    """/health needs no token and counted tasks by scanning every row with its request and result: 0.45 s on a
    store of 20k finished tasks, and a flood of it stalled authenticated requests (attacker review, 2026-12-02)."""
    from drk.serve.store import TaskStore

    store = TaskStore(tmp_path / "tasks.sqlite")
    try:
        for query, args in (("SELECT state, COUNT(*) FROM tasks GROUP BY state", ()),
                            ("SELECT COUNT(*) FROM tasks WHERE state IN (?, ?)", ("queued", "running"))):
            plan = " ".join(str(row[-1]) for row in store._conn.execute(f"EXPLAIN QUERY PLAN {query}", args))
            assert "COVERING INDEX tasks_by_state" in plan, plan
    finally:
        store.close()
