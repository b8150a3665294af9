"""The KernelGYM wire format mapped onto drk's EvalConfig/EvalResult, and the task store: pure, no server."""

import json
import math

import pytest

from drk.gym import EvalConfig, EvalResult
from drk.serve.kernelgym import (
    eval_config_for,
    ignored_fields,
    result_from_response,
    task_digest,
    task_response,
)
from drk.serve.store import NewTask, QueueFull, TaskConflict, TaskStore


def test_request_fields_map_onto_eval_config():
    base = EvalConfig()
    config = eval_config_for({"num_correct_trials": 7, "num_perf_trials": 30, "timeout": 45.5}, base)
    assert (config.correctness_trials, config.timing_trials, config.timeout_s) == (7, 30, 45.5)
    assert eval_config_for({"num_correct_trials": 1}, base).correctness_trials == 2  # drk needs both passes
    assert eval_config_for({}, base) == base
    # drk's own settings ride along; the KernelGYM field wins over drk_config for the same setting
    config = eval_config_for({"drk_config": {"timing_policy": "authors", "timeout_s": 10}, "timeout": 20}, base)
    assert (config.timing_policy, config.timeout_s) == ("authors", 20)


def test_requests_cannot_change_server_only_settings_or_misspell_keys():
    base = EvalConfig()
    with pytest.raises(ValueError, match="set by the server"):
        eval_config_for({"drk_config": {"isolation": "process"}}, base)
    assert eval_config_for({"drk_config": {"isolation": "auto"}}, base) == base  # the server's own value is fine
    with pytest.raises(ValueError, match="set by the server"):  # the judge asking the runner for its outputs
        eval_config_for({"drk_config": {"direct_reads": False}}, base)
    with pytest.raises(ValueError, match="unknown EvalConfig keys"):
        eval_config_for({"drk_config": {"timing_polcy": "authors"}}, base)
    with pytest.raises(ValueError, match="timing_policy"):
        eval_config_for({"drk_config": {"timing_policy": "fast"}}, base)


def test_response_fields_from_a_result_are_strict_json_and_round_trip():
    result = EvalResult(status="hacked", problem="relu2", hacked=True, hack_reasons=["decoy"], speedup=math.inf,
                        ref_ms=0.25, kernel_ms=math.nan, stage_s={"judge": math.nan}, error="decoy kernel")
    answer = task_response("t1", "completed", result.to_dict(), {"drk_serve": {"attempts": 1}})
    text = json.dumps(answer, allow_nan=False)  # raises on NaN/Infinity
    assert answer["correctness"] is False and answer["decoy_kernel"] is True
    assert answer["speedup"] is None and answer["reference_runtime"] == 0.25 and answer["kernel_runtime"] is None
    assert answer["error_message"] == "decoy kernel" and answer["status"] == "completed"
    assert answer["metadata"]["drk_status"] == "hacked" and answer["metadata"]["hack_reasons"] == ["decoy"]
    assert answer["metadata"]["drk_serve"] == {"attempts": 1}
    back = result_from_response(json.loads(text))
    assert isinstance(back, EvalResult) and back.status == "hacked" and back.hack_reasons == ["decoy"]
    assert back.speedup is None and back.stage_s == {"judge": None} and back.ref_ms == 0.25

    correct = task_response("t2", "completed", EvalResult(status="correct", correct=True, speedup=1.5).to_dict())
    assert correct["correctness"] is True and correct["decoy_kernel"] is False and correct["speedup"] == 1.5


def test_pending_response_has_no_result():
    answer = task_response("t3", "queued", None)
    assert answer["status"] == "queued" and answer["metadata"]["drk"] is None and answer["correctness"] is False
    with pytest.raises(ValueError, match="no drk result"):
        result_from_response(answer)


def test_ignored_fields_and_digest():
    task = {"task_id": "a", "reference_code": "r", "kernel_code": "k", "timeout": 5, "backend": "triton"}
    assert ignored_fields(task) == ["backend"]
    assert task_digest(task) == task_digest({**task, "task_id": "b"})  # the id is not content
    assert task_digest(task) != task_digest({**task, "kernel_code": "k2"})


def _task(task_id, content="x", batch_id=None):
    request = {"task_id": task_id, "kernel_code": content}
    return NewTask(task_id, batch_id, task_digest(request), request)


def test_store_dedups_bounds_and_records_each_result_once(tmp_path):
    store = TaskStore(tmp_path / "t.sqlite")
    rows, new = store.submit([_task("a"), _task("b"), _task("a")], max_pending=3)
    assert new == ["a", "b"] and [r.task_id for r in rows] == ["a", "b", "a"]
    assert store.submit([_task("a")], max_pending=3)[1] == []  # the same task again: nothing new
    with pytest.raises(TaskConflict, match="other content"):
        store.submit([_task("a", "y")])
    with pytest.raises(QueueFull, match="queue full"):
        store.submit([_task("c"), _task("d")], max_pending=3)
    assert store.get("c") is None  # all or none
    assert store.claim("a").state == "running" and store.claim("a") is None  # claimed once
    assert store.finish("a", "completed", {"status": "correct"}) is True
    assert store.finish("a", "failed", {"status": "runtime_error"}) is False  # the first result stands
    assert store.get("a").result == {"status": "correct"} and store.get("a").attempts == 1
    store.claim("b")
    store.close()

    reopened = TaskStore(tmp_path / "t.sqlite")  # a restart: 'b' was running, it runs again
    assert [r.task_id for r in reopened.recover()] == ["b"]
    assert reopened.counts() == {"queued": 1, "running": 0, "completed": 1, "failed": 0}
    assert reopened.claim("b").attempts == 2
