"""Warm judge processes (drk.gym.judges): reused across evaluations, replaced when they die or overrun, no leaks."""

import os
import time

import pytest
import torch

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, evaluate, isolation
from drk.gym.judges import JudgeServers, shared_judges


@pytest.fixture(autouse=True)
def _needs_sandbox():
    try:
        isolation.available_level("auto")
    except isolation.IsolationUnavailable as exc:
        pytest.skip(str(exc))


def _idle_server():
    """The judge the last evaluation gave back (idle judges are taken last-in, first-out: the next one uses it)."""
    servers = shared_judges()._idle[("cpu", 0)]
    assert servers, "an evaluation gives its judge back"
    return servers[-1]


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_a_judge_serves_evaluation_after_evaluation_without_leaking_descriptors():
    problem = example_problem("relu2")
    assert evaluate(problem, example_candidate("good"), device="cpu").status == "correct"
    server = _idle_server()
    pid, fds_after_one = server.process.pid, _open_fds(server.process.pid)
    statuses = [evaluate(problem, example_candidate(name), device="cpu").status
                for name in ("wrong", "good", "raises", "good")]
    assert statuses == ["incorrect", "correct", "runtime_error", "correct"]
    again = _idle_server()
    assert again is server and again.process.pid == pid and server.jobs >= 5
    time.sleep(0.5)  # the runners' output threads end at their EOF
    assert _open_fds(pid) <= fds_after_one


def test_a_judge_that_died_between_evaluations_is_replaced_and_costs_nothing():
    problem = example_problem("relu2")
    assert evaluate(problem, example_candidate("good"), device="cpu").status == "correct"
    dead = _idle_server()
    os.kill(dead.process.pid, 9)
    dead.process.join(10)
    result = evaluate(problem, example_candidate("good"), device="cpu")
    assert result.status == "correct" and not result.env_error
    assert _idle_server() is not dead


def test_a_job_past_its_time_limit_kills_its_judge_and_it_is_never_reused():
    from drk.gym.warm import shared_runners

    level = isolation.available_level("auto").level
    servers = JudgeServers()
    try:
        runners = [shared_runners().take("cpu", 0, level) for _ in range(2)]
        problem = example_problem("relu2")
        payload = {"problem_source": problem.source, "problem_name": problem.name, "problem_path": "p.py",
                   "candidate_source": example_candidate("good"), "static_reasons": [], "device": "cpu",
                   "jit_function_names": [],
                   "gpu_index": 0, "config": {}, "isolation_level": level, "secret": "00" * 32}
        outcome = servers.run("cpu", 0, payload, None, [r.handle for r in runners], timeout_s=0.05)
        for runner in runners:
            runner.kill()
        assert outcome.timed_out and outcome.result is None
        assert servers._idle[("cpu", 0)] == [] and servers._all == []
    finally:
        servers.close()


def test_a_judge_whose_own_work_failed_is_never_reused():
    """A CUDA error in a judge's reference (or a drk stage) is sticky for its context: every later job on that judge
    failed with it (H200, 2026-12-02). A judge whose job failed on its side is replaced; one whose candidate failed is
    not."""
    problem = example_problem("relu2")
    assert evaluate(problem, example_candidate("raises"), device="cpu").status == "runtime_error"
    kept = _idle_server()
    broken = problem.source.replace("def forward(self, x):", "def forward(self, x):\n        raise RuntimeError("
                                    "'CUDA error: an illegal memory access was encountered')", 1)
    assert broken != problem.source
    with pytest.raises(Exception, match="illegal memory access"):
        evaluate(type(problem).from_source(broken, name="broken_reference"), example_candidate("good"), device="cpu")
    assert kept not in shared_judges()._all and not kept.alive()
    # its output file and compile caches went with it (they stayed until the caller exited, up to 1 GiB each)
    assert kept._files and not any(os.path.exists(path) for path in kept._files)
    assert evaluate(problem, example_candidate("good"), device="cpu").status == "correct"


def test_each_judge_compiles_into_caches_of_its_own():
    """Judges side by side shared inductor's and Triton's on-disk caches, which can race (pytorch/pytorch#173679):
    each server now has its own, under the servers' private directory."""
    reporting = example_problem("relu2").source.replace(
        "def forward(self, x):", "def forward(self, x):\n        import os\n        raise RuntimeError('caches: ' + "
        "os.environ['TORCHINDUCTOR_CACHE_DIR'] + ' ' + os.environ['TRITON_CACHE_DIR'])", 1)
    problem = type(example_problem("relu2")).from_source(reporting, name="reports_its_caches")
    seen = []
    for _ in range(2):  # a judge whose reference failed is replaced: the second evaluation has a new one
        with pytest.raises(Exception, match="caches: ") as failure:
            evaluate(problem, example_candidate("good"), device="cpu")
        seen.append(str(failure.value).split("caches: ", 1)[1].split()[:2])
    root = shared_judges()._stdio_dir
    for inductor, triton in seen:
        assert inductor.startswith(root) and triton.startswith(root) and inductor != triton
    assert seen[0] != seen[1]


def test_a_problem_that_sets_torch_globals_does_not_change_the_next_evaluation():
    """A warm judge serves many problems: one whose module sets float64 as torch's default dtype made the next
    problem's reference float64 and an honest candidate ``incorrect`` (attacker review, 2026-12-01)."""
    from drk.gym import Problem

    relu2 = example_problem("relu2")
    f64 = Problem.from_source(relu2.source.replace("import torch.nn as nn",
                                                   "import torch.nn as nn\ntorch.set_default_dtype(torch.float64)"),
                              name="relu2_f64")
    assert evaluate(f64, example_candidate("good"), device="cpu").status == "correct"
    after = evaluate(relu2, example_candidate("good"), device="cpu")
    assert after.status == "correct", after.error


def test_checksum_weights_do_not_pile_up_in_a_warm_judge():
    from drk.gym import judges

    saved = judges._torch_globals()
    from drk.gym import rounds

    rounds._weights(1000, torch.device("cpu"), 1)
    judges._between_jobs(saved)
    assert rounds._WEIGHTS == {}


def _payload(candidate: str, **config) -> dict:
    from drk.gym import probes

    problem = example_problem("relu2")
    return {"problem_source": problem.source, "problem_name": problem.name, "problem_path": "p.py",
            "candidate_source": candidate, "static_reasons": [], "device": "cpu",
            "jit_function_names": probes.jit_function_names(candidate), "gpu_index": 0, "config": config,
            "isolation_level": isolation.available_level("auto").level, "secret": "00" * 32}


def test_only_a_candidate_that_passes_its_checks_takes_a_probe_runner(monkeypatch):
    """The probe runner is asked for after the correctness checks: a failing candidate costs one runner, not two
    (runner start-ups bounded a Pool's throughput on the H200, issue 13)."""
    from drk.gym.warm import WarmRunners

    taken = []
    original = WarmRunners.take

    def counting_take(self, *args, profiler=True, **kwargs):
        taken.append(profiler)
        return original(self, *args, profiler=profiler, **kwargs)

    monkeypatch.setattr(WarmRunners, "take", counting_take)
    problem = example_problem("relu2")
    wrong = evaluate(problem, example_candidate("wrong"), device="cpu")
    assert wrong.status == "incorrect" and taken == [True] and "probe_runner" not in wrong.stage_s
    good = evaluate(problem, example_candidate("good"), device="cpu")
    assert good.status == "correct" and taken == [True, True, False] and "probe_runner" in good.stage_s, (
        good.status, good.error)
    # without a profile, the candidate's runner need not have warmed the profiler up either
    unprofiled = evaluate(problem, example_candidate("good"), device="cpu", config=EvalConfig(profile=False))
    assert unprofiled.status == "correct" and taken[3:] == [False, False], (unprofiled.status, unprofiled.error)


def test_no_probe_runner_to_be_had_is_the_environments_failure():
    from drk.gym.warm import shared_runners

    level = isolation.available_level("auto").level
    servers = JudgeServers()
    runner = shared_runners().take("cpu", 0, level)

    def none_left():
        raise OSError("no sandbox left")

    try:
        outcome = servers.run("cpu", 0, _payload(example_candidate("good")), None, [runner.handle], 120,
                              more_runner=none_left)
    finally:
        runner.kill()
        servers.close()
    assert "internal_error" in outcome.result and "no sandbox left" in outcome.result["internal_error"]


def test_a_probe_runner_whose_descriptors_are_closed_is_named_at_once():
    """A handle whose descriptors the caller no longer holds: the answer announcing it went out, passing them failed,
    and the judge waited for them until its job limit (an honest fused ReLU was an ``env_error`` after 540 s in
    stage ``probe_runner``, CI of 381c282). Now the caller checks them first and the judge says which one."""
    import resource
    import subprocess

    from drk.gym.warm import RunnerHandle, shared_runners

    level = isolation.available_level("auto").level
    servers = JudgeServers()
    runner = shared_runners().take("cpu", 0, level)
    # Descriptor numbers this process can never be given (above its soft limit), and a pid of a child of ours: the
    # test once closed three pipes and named them, the judge server then opened descriptors with the same numbers,
    # they passed as open, and the judge killed the handle's pid, which was pytest's own (CI killed, session 24).
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    soft = soft if 0 < soft < 2**30 else 2**30  # RLIM_INFINITY reads as -1
    stand_in = subprocess.Popen(["sleep", "120"])
    gone = RunnerHandle(stand_in.pid, to_runner=soft + 1, from_runner=soft + 2, output=soft + 3)
    started = time.monotonic()
    try:
        outcome = servers.run("cpu", 0, _payload(example_candidate("good")), None, [runner.handle], 120,
                              more_runner=lambda: gone)
    finally:
        runner.kill()
        servers.close()
        stand_in.kill()
        stand_in.wait()
    assert not outcome.timed_out and time.monotonic() - started < 60
    assert "is not open in the caller" in outcome.result.get("internal_error", ""), outcome.result


def test_a_judge_waits_for_a_runner_only_so_long(monkeypatch):
    """A caller that never answers the request for a runner: the judge gives up after RUNNER_ANSWER_S (an
    environment failure), and after DESCRIPTORS_S when the descriptors announced never come."""
    import json
    import multiprocessing

    from drk.gym import judges
    from drk.gym.sandbox import Reporter

    monkeypatch.setattr(judges, "RUNNER_ANSWER_S", 0.3)
    monkeypatch.setattr(judges, "DESCRIPTORS_S", 0.3)
    judge_end, caller_end = multiprocessing.Pipe(duplex=True)
    try:
        with pytest.raises(OSError, match="did not answer"):
            judges._request_runner(judge_end, Reporter(judge_end, "t"), "t")
        assert json.loads(caller_end.recv_bytes())["kind"] == "runner"  # it did ask
        caller_end.send_bytes(json.dumps({"token": "t", "kind": "runner", "runner": [1, False, 3]}).encode())
        with pytest.raises(OSError, match="descriptors did not follow"):
            judges._request_runner(judge_end, Reporter(judge_end, "t"), "t")
    finally:
        judge_end.close()
        caller_end.close()


def test_waiting_for_the_probe_runner_is_not_the_candidates_time():
    """A probe runner slow to come (spares short under load) must not make an honest candidate ``timeout``: the
    wait moves the candidate's deadline."""
    from drk.gym.warm import shared_runners

    level = isolation.available_level("auto").level
    servers = JudgeServers()
    runners = [shared_runners().take("cpu", 0, level)]

    def slow_probe_runner():
        time.sleep(8.0)
        runners.append(shared_runners().take("cpu", 0, level, profiler=False))
        return runners[-1].handle

    try:
        outcome = servers.run("cpu", 0, _payload(example_candidate("good"), timeout_s=6), None, [runners[0].handle],
                              120, more_runner=slow_probe_runner)
    finally:
        for runner in runners:
            runner.kill()
        servers.close()
    assert outcome.result.get("status") == "correct", outcome.result
    assert outcome.stage_s["probe_runner"] >= 8.0


def _late_hello(handle, delay_s: float):
    """``handle`` seen through a relay that holds the runner's first words (its hello) back ``delay_s``: a runner
    whose start-up was slow (a 2-core host busy starting spares). The relay reads its own duplicate of the runner's
    pipe and ends with it: a relay left reading a descriptor number the test had closed took the bytes of whatever
    later test's pipe got that number."""
    import dataclasses
    import threading

    source = os.dup(handle.from_runner)
    read_end, write_end = os.pipe()

    def relay():
        try:
            time.sleep(delay_s)
            while chunk := os.read(source, 1 << 16):
                os.write(write_end, chunk)
        except OSError:  # the judge is gone (its end closed)
            pass
        finally:
            os.close(source)
            os.close(write_end)

    thread = threading.Thread(target=relay, daemon=True)
    thread.start()
    return dataclasses.replace(handle, from_runner=read_end), thread


def test_the_runners_start_up_is_not_the_candidates_time():
    """The candidate's clock starts when its runner is given its code: a runner slow to start (CI: a segfaulting
    candidate judged ``timeout`` because its runner's start-up had used most of a 10 s limit) leaves the candidate
    all of ``timeout_s``."""
    from drk.gym.warm import shared_runners

    level = isolation.available_level("auto").level
    servers = JudgeServers()
    runners = [shared_runners().take("cpu", 0, level)]
    late, relay = _late_hello(runners[0].handle, 10.0)

    def probe_runner():
        runners.append(shared_runners().take("cpu", 0, level, profiler=False))
        return runners[-1].handle

    try:
        outcome = servers.run("cpu", 0, _payload(example_candidate("good"), timeout_s=6), None, [late], 120,
                              more_runner=probe_runner)
    finally:
        for runner in runners:
            runner.kill()
        servers.close()
        os.close(late.from_runner)
        relay.join(timeout=10)
    assert not relay.is_alive()
    assert outcome.stage_s["runner_start"] >= 6.0  # the hello came after the candidate's whole limit
    assert outcome.result.get("status") == "correct", outcome.result


def test_a_probe_runner_that_never_starts_is_the_candidates_timeout_not_an_escape():
    """The probe runner starts while the candidate's processes run (they can load the host): its start-up is not
    the candidate's time only up to a grace (60 s; 2 s here); past it the evaluation is the candidate's
    ``timeout``, never an uncharged ``env_error`` (attacker review, 2026-12-02)."""
    import subprocess

    from drk.gym.warm import RunnerHandle, shared_runners

    level = isolation.available_level("auto").level
    servers = JudgeServers()
    runner = shared_runners().take("cpu", 0, level)
    silent = subprocess.Popen(["sleep", "120"], start_new_session=True)  # a "runner" that never says hello
    requests, answers, output = os.pipe(), os.pipe(), os.pipe()
    mute = RunnerHandle(silent.pid, to_runner=requests[1], from_runner=answers[0], output=output[0])
    try:
        outcome = servers.run("cpu", 0, {**_payload(example_candidate("good"), timeout_s=4), "probe_start_grace_s": 2},
                              None, [runner.handle], 120, more_runner=lambda: mute)
    finally:
        runner.kill()
        silent.kill()
        silent.wait()
        servers.close()
        for fd in (*requests, *answers, *output):
            os.close(fd)
    assert outcome.result.get("status") == "timeout", outcome.result
    assert "probe_runner" in outcome.result.get("error", "")


def test_a_decoy_slow_in_every_call_is_not_stuck_without_kernels():
    """A call with the kernels disabled that outlasts its bound counts as "the kernels matter"
    (``legit_progress_loop``); the bound is relative to the control calls, so a decoy slow in every call (it cannot
    tell the disabled ones apart) is still ``hacked``. With the 0.1 s floor here and no factor, every disabled call of
    this decoy would have been "stuck" and it would have been ``correct``."""
    from drk.gym.warm import shared_runners

    slow_decoy = example_candidate("decoy").replace("        return torch.relu(x) * 2.0",
                                                    "        import time\n        time.sleep(0.3)\n"
                                                    "        return torch.relu(x) * 2.0")
    assert "sleep" in slow_decoy
    level = isolation.available_level("auto").level
    servers = JudgeServers()
    runners = [shared_runners().take("cpu", 0, level)]

    def probe_runner():
        runners.append(shared_runners().take("cpu", 0, level, profiler=False))
        return runners[-1].handle

    try:
        outcome = servers.run("cpu", 0, {**_payload(slow_decoy, timeout_s=120), "disabled_call_floor_s": 0.1}, None,
                              [runners[0].handle], 400, more_runner=probe_runner)
    finally:
        for runner in runners:
            runner.kill()
        servers.close()
    assert outcome.result.get("status") == "hacked", outcome.result
    assert len(runners) == 2  # no disabled call was taken for stuck: the first probe runner served them all


def test_a_judges_output_file_is_emptied_past_its_bound(tmp_path):
    from drk.gym.judges import trim_log

    path = tmp_path / "judge.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        os.write(fd, b"x" * 100)
        assert not trim_log(fd, keep_bytes=100) and path.stat().st_size == 100
        os.write(fd, b"y")
        assert trim_log(fd, keep_bytes=100) and path.stat().st_size == 0
        os.write(fd, b"next")
        assert path.read_bytes() == b"next"  # rewound: no hole before what comes next
    finally:
        os.close(fd)


def test_a_chatty_problem_does_not_fill_the_disk_through_the_judges_output():
    """A problem printing 100 MB per get_inputs call grew a warm judge's output file by 1 GiB per evaluation
    (attacker review, 2026-12-02)."""
    from drk.gym import Problem
    from drk.gym.judges import JUDGE_LOG_KEEP_BYTES

    relu2 = example_problem("relu2")
    chatty = Problem.from_source(relu2.source.replace("def get_inputs():", "def get_inputs():\n    print('x' * 2**24)"),
                                 name="relu2_chatty")
    assert chatty.source != relu2.source
    assert evaluate(chatty, example_candidate("good"), device="cpu").status == "correct"
    server = _idle_server()
    sizes = [os.path.getsize(f"/proc/{server.process.pid}/fd/1")] if os.path.exists(
        f"/proc/{server.process.pid}/fd/1") else []
    assert sizes and sizes[0] <= JUDGE_LOG_KEEP_BYTES


def test_a_result_waiting_in_the_pipe_is_read_even_after_the_callers_limit():
    """A caller stalled past a job's limit (its GIL held: the fence regex once did this for minutes) dropped the
    result already waiting in the pipe, and the evaluation became an env_error blamed on the problem."""
    import json
    import multiprocessing
    import time as clock

    from drk.gym import sandbox

    ours, theirs = multiprocessing.Pipe(duplex=True)

    class Alive:
        exitcode = None

        def is_alive(self):
            return True

    for message in ({"token": "t", "kind": "stage", "stage": "timing"},
                    {"token": "t", "kind": "result", "result": {"status": "correct"}}):
        theirs.send_bytes(json.dumps(message).encode())
    long_ago = clock.monotonic() - 100.0
    outcome = sandbox.collect(ours, Alive(), "t", long_ago, timeout_s=10.0)
    assert outcome.result == {"status": "correct"} and not outcome.timed_out and outcome.last_stage == "timing"
    nothing = sandbox.collect(ours, Alive(), "t", long_ago, timeout_s=10.0)  # an empty pipe past the limit
    assert nothing.timed_out and nothing.result is None


def test_a_stage_entered_again_is_recorded_where_it_last_ended():
    """The judge's running GPU peak per stage must read in order: ``hacking`` is left for ``probe_runner`` and
    entered again, and its last figure belongs after ``probe_runner``'s."""
    from drk.gym.judge import record_stage_end

    record: dict[str, float] = {}
    for stage, peak in [("correctness", 3522.0), ("hacking", 3522.0), ("probe_runner", 3522.0), ("hacking", 4098.0),
                        ("timing", 4100.0)]:
        record_stage_end(record, stage, peak)
    assert list(record) == ["correctness", "probe_runner", "hacking", "timing"]
    assert list(record.values()) == sorted(record.values())


def test_the_judges_waits_for_the_gpu_lock_are_never_the_candidates_time():
    """A wait for the GPU lock is other evaluations' time: credited to every runner of the evaluation, the timing's
    exclusive wait too (it was credited to none; a probe request's wait only to the probe runner, and lost to the
    timing and to a replacement probe runner: attacker review 12, reasoned)."""
    import time
    from types import SimpleNamespace

    import torch

    from drk.gym.judge import Session

    class SlowLock:
        def acquire(self, max_hold_s=None):
            time.sleep(0.3)
            return True

        def release(self):
            pass

        held = True

    session = object.__new__(Session)
    main, probe = SimpleNamespace(deadline=100.0), SimpleNamespace(deadline=200.0)
    session.runner, session.probe_runner = main, probe
    session.ref, session.timing_lock = SimpleNamespace(device=torch.device("cuda")), SlowLock()
    with session._gpu_to_ourselves() as state:
        assert state.quiet is True
    assert main.deadline >= 100.3 and probe.deadline >= 200.3
    session._credit(5.0, already=probe)  # a probe request's own wait, already on the probe runner's clock
    assert main.deadline >= 105.3 and 200.3 <= probe.deadline < 201.0
