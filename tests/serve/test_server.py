"""``drk serve`` as a real process on 127.0.0.1, over real HTTP: health, auth, verdicts, batches, malformed and
oversize requests, bad references, task-id dedup, and a bounded load test with nothing lost or duplicated."""

import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from drk.examples import example_candidate, example_problem

httpx = pytest.importorskip("httpx")

REFERENCE = example_problem("relu2").source
GOOD, DECOY = example_candidate("good"), example_candidate("decoy")
SYNTAX_ERROR = example_candidate("syntax_error")


def strict(response) -> dict:
    """The body as JSON, refusing NaN/Infinity tokens."""
    def refuse(token):
        raise AssertionError(f"non-strict JSON token {token}")

    return json.loads(response.text, parse_constant=refuse)


def task(task_id=None, kernel=SYNTAX_ERROR, **fields):
    body = {"reference_code": REFERENCE, "kernel_code": kernel, **fields}
    if task_id:
        body["task_id"] = task_id
    return body


def test_health_needs_no_token(server):
    body = httpx.get(f"{server.url}/health").json()
    assert body["status"] == "ok" and body["device"] == "cpu" and body["workers"] == 2
    assert set(body["tasks"]) == {"queued", "running", "completed", "failed"} and body["max_code_chars"] == 50000


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong-token-0000"},
                                     {"Authorization": "Basic c2VydmUtdGVzdA=="}, {"Authorization": "Bearer"}])
def test_auth_is_required(server, headers):
    for method, path in (("POST", "/evaluate"), ("POST", "/evaluate/batch"), ("GET", "/results/x")):
        response = httpx.request(method, f"{server.url}{path}", headers=headers, json=task("auth-x"))
        assert response.status_code == 401, (method, path)
        assert response.headers["www-authenticate"] == "Bearer" and "token" in response.json()["detail"]
    with server.client() as client:
        assert client.get("/results/auth-x").status_code == 404  # nothing was stored


def test_good_and_hacked_candidates(server):
    with server.client() as client:
        good = client.post("/evaluate", json=task("relu2-good", GOOD, problem_name="relu2"))
        decoy = client.post("/evaluate", json=task("relu2-decoy", DECOY))
    assert good.status_code == 200 and decoy.status_code == 200
    good, decoy = strict(good), strict(decoy)
    assert good["status"] == "completed" and good["correctness"] is True and good["decoy_kernel"] is False
    assert good["metadata"]["drk"]["status"] == "correct" and good["metadata"]["drk"]["problem"] == "relu2"
    assert good["speedup"] is None and good["kernel_runtime"] > 0  # CPU: interpreter wall times, no speedup
    assert decoy["correctness"] is False and decoy["decoy_kernel"] is True and decoy["status"] == "completed"
    assert decoy["metadata"]["drk_status"] == "hacked" and "decoy" in decoy["metadata"]["hack_reasons"]
    assert decoy["error_message"]


def test_kernelgym_fields_are_applied_and_unknown_ones_reported(server):
    with server.client() as client:
        answer = strict(client.post("/evaluate", json=task("kg-fields", num_correct_trials=1, num_perf_trials=9,
                                                           timeout=30, backend="triton")))
    config = answer["metadata"]["eval_config"]
    assert (config["correctness_trials"], config["timing_trials"], config["timeout_s"]) == (2, 9, 30)
    assert answer["metadata"]["drk_serve"]["ignored_fields"] == ["backend"]
    assert answer["metadata"]["drk"]["status"] == "compile_error" and answer["status"] == "completed"


def test_batch_and_idempotent_resubmission(server):
    batch = {"batch_id": "b1", "tasks": [task(kernel=GOOD), task(kernel=SYNTAX_ERROR),
                                         task(kernel=example_candidate("no_model_new"))]}
    with server.client() as client:
        first = client.post("/evaluate/batch", json=batch, params={"wait": "true"})
        assert first.status_code == 200, first.text
        results = strict(first)["results"]
        assert [r["task_id"] for r in results] == ["b1-0", "b1-1", "b1-2"]
        assert [r["metadata"]["drk_status"] for r in results] == ["correct", "compile_error", "format_error"]
        assert all(r["metadata"]["drk_serve"]["batch_id"] == "b1" for r in results)
        counts = client.get("/health").json()["tasks"]
        again = strict(client.post("/evaluate/batch", json=batch))  # same ids, same content: the same tasks
        assert again["results"] == results and client.get("/health").json()["tasks"] == counts
        queued = client.post("/evaluate/batch", json={"tasks": [task(kernel=SYNTAX_ERROR + "\n# b2")]})
        assert queued.status_code in (200, 202) and queued.json()["batch_id"]
        task_id = queued.json()["results"][0]["task_id"]
        assert client.get(f"/results/{task_id}", params={"wait_s": 60}).json()["status"] == "completed"


def test_same_id_with_other_content_is_a_conflict(server):
    with server.client() as client:
        first = strict(client.post("/evaluate", json=task("dup-1")))
        assert strict(client.post("/evaluate", json=task("dup-1"))) == first
        conflict = client.post("/evaluate", json=task("dup-1", kernel=SYNTAX_ERROR + "\n# changed"))
        assert conflict.status_code == 409 and "other content" in conflict.json()["detail"]
        assert strict(client.get("/results/dup-1")) == first


@pytest.mark.parametrize("body, needle", [
    ({"reference_code": REFERENCE}, "kernel_code: Field required"),
    ({"reference_code": 1, "kernel_code": "x"}, "reference_code: Input should be a valid string"),
    ({"reference_code": "r", "kernel_code": "k", "num_correct_trials": "many"}, "num_correct_trials"),
    ({"reference_code": "r", "kernel_code": "k", "timeout": -1}, "timeout"),
    ({"reference_code": "r", "kernel_code": "k", "task_id": "no/slash"}, "task_id"),
    ({"reference_code": "r", "kernel_code": "k", "task_id": ".."}, "task_id"),  # a client would fetch /results/
    ([1, 2], "Input should be a valid dictionary"),
])
def test_malformed_requests_are_422_with_a_message(server, body, needle):
    with server.client() as client:
        response = client.post("/evaluate", json=body)
    assert response.status_code == 422 and needle in response.json()["message"]


def test_more_malformed_requests(server):
    with server.client() as client:
        bad_json = client.post("/evaluate", content=b"{not json", headers={"Content-Type": "application/json"})
        assert bad_json.status_code == 422
        unknown = client.post("/evaluate", json=task(drk_config={"timing_polcy": "authors"}))
        assert unknown.status_code == 422 and "unknown EvalConfig keys" in unknown.json()["detail"]
        sandbox = client.post("/evaluate", json=task(drk_config={"isolation": "process"}))
        assert sandbox.status_code == 422 and "set by the server" in sandbox.json()["detail"]
        assert client.post("/evaluate/batch", json={"tasks": []}).status_code == 422
        assert client.get("/results/never-submitted").status_code == 404
        # resource limits hold however a request sets them (drk_config once bypassed the 3600 s timeout cap)
        for over in ({"timeout_s": 1e9}, {"correctness_trials": 10_000}, {"calibration_rounds": 1000},
                     {"timing_burst_cycles": 10**12}):
            limited = client.post("/evaluate", json=task(drk_config=over))
            assert limited.status_code == 422 and "over this server's limit" in limited.json()["detail"], over


def test_oversize_requests_are_413(server):
    with server.client() as client:
        code = client.post("/evaluate", json=task(kernel="#" * 50_001))
        assert code.status_code == 413 and "kernel_code is 50001 characters" in code.json()["detail"]
        reference = client.post("/evaluate/batch", json={"tasks": [task(), {**task(), "reference_code": "#" * 60_000}]})
        assert reference.status_code == 413 and "tasks[1].reference_code" in reference.json()["detail"]
        body = client.post("/evaluate", json=task(kernel="#" * 40_000, padding="x" * (2 * 2**20)))
        assert body.status_code == 413 and "limit is 1048576 bytes" in body.json()["detail"]

        def chunks():  # no Content-Length: the limit is enforced on the bytes as they arrive
            for _ in range(40):
                yield b" " * 65536

        streamed = client.post("/evaluate", content=chunks(), headers={"Content-Type": "application/json"})
        assert streamed.status_code == 413


def test_bad_references_are_results_not_server_errors(server):
    crashing = REFERENCE.replace("return torch.relu(x) * 2.0", "raise RuntimeError('reference boom')")
    assert crashing != REFERENCE
    deep = REFERENCE + "\nPAD = " + "+".join(["1"] * 3000) + "\n"  # parses in CPython, too deep for ast.parse
    with server.client() as client:
        malformed = strict(client.post("/evaluate", json=task("bad-ref-1", GOOD, reference_code="x = 1")))
        crashed = strict(client.post("/evaluate", json=task("bad-ref-2", GOOD, reference_code=crashing)))
        too_deep = strict(client.post("/evaluate", json=task("bad-ref-3", GOOD, reference_code=deep)))
    assert too_deep["status"] == "failed" and "bad reference" in too_deep["error_message"]  # was left running
    for answer in (malformed, crashed):
        assert answer["status"] == "failed" and answer["correctness"] is False
        assert answer["metadata"]["drk"]["env_error"] is True and answer["error_message"].startswith("[drk]")
    assert "bad reference" in malformed["error_message"] and "not in KernelBench form" in malformed["error_message"]
    assert "reference boom" in crashed["error_message"]


def test_load_nothing_lost_or_duplicated(server):
    """200 requests from 8 threads (fast compile errors, a tenth of them re-sent): one task and one result each."""
    with server.client() as client:
        before = client.get("/health").json()["tasks"]

    def send(i: int) -> dict:
        with server.client() as client:
            answer = strict(client.post("/evaluate", json=task(f"load-{i % 180}", SYNTAX_ERROR + f"\n# {i % 180}")))
            assert answer["task_id"] == f"load-{i % 180}" and answer["status"] == "completed"
            return answer

    with ThreadPoolExecutor(8) as executor:
        answers = list(executor.map(send, range(200)))
    by_id: dict[str, dict] = {}
    for answer in answers:
        by_id.setdefault(answer["task_id"], answer)
        assert answer == by_id[answer["task_id"]]  # a re-sent id gets the first result, not a new one
    assert len(by_id) == 180 and all(a["metadata"]["drk_serve"]["attempts"] == 1 for a in answers)
    with server.client() as client:
        after = client.get("/health").json()["tasks"]
    assert after["completed"] - before["completed"] == 180 and after["queued"] == after["running"] == 0
    with sqlite3.connect(server.db) as db:
        rows = db.execute("SELECT COUNT(*), COUNT(DISTINCT task_id) FROM tasks WHERE task_id LIKE 'load-%'").fetchone()
    assert rows == (180, 180)


def test_problem_allow_list_refuses_other_references(make_server):
    from drk.examples import EXAMPLES_ROOT

    srv = make_server("--problems", str(EXAMPLES_ROOT / "relu2" / "problem.py"))
    with srv.client() as http:
        known = http.post("/evaluate", json=task(kernel=SYNTAX_ERROR))
        assert known.status_code == 200 and strict(known)["status"] == "completed"
        crlf = http.post("/evaluate", json=task(reference_code=REFERENCE.replace("\n", "\r\n")))
        assert crlf.status_code == 200  # the same file with other line endings is the same reference
        other = http.post("/evaluate", json=task(reference_code=REFERENCE + "\nimport os\nos.system('true')\n"))
        assert other.status_code == 403 and "--problems" in other.json()["detail"]
