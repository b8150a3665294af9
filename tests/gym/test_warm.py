"""Runners started ahead of time (drk.gym.warm): spares are live, replaced when taken or dead, and killed at the end."""

import os
import time

import pytest

from drk.gym import isolation, wire
from drk.gym.warm import WarmRunners, spare_key


def _level() -> str:
    try:
        return isolation.available_level("auto").level
    except isolation.IsolationUnavailable as exc:
        pytest.skip(str(exc))


def _hello(runner) -> dict:
    header, _ = wire.recv_frame(runner.handle.from_runner, deadline=time.monotonic() + 120, max_blob_bytes=0)
    return header


def _wait_for_spare(runners: WarmRunners, key, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with runners._lock:
            idle = list(runners._idle[key])
        if idle:
            return idle[0]
        time.sleep(0.2)
    raise AssertionError("no spare was started")


def test_take_gives_a_live_runner_and_starts_its_replacement():
    level = _level()
    runners = WarmRunners(spares=1)
    try:
        runner = runners.take("cpu", 0, level)
        assert _hello(runner)["op"] == "hello"
        spare = _wait_for_spare(runners, spare_key("cpu", 0, level))
        assert spare is not runner and spare.alive()
        runner.kill()
        assert not runner.alive()
    finally:
        runners.close()


def test_a_dead_spare_is_never_handed_out_and_close_kills_spares():
    level = _level()
    runners = WarmRunners(spares=1)
    try:
        runners.warm("cpu", 0, level)
        dead = _wait_for_spare(runners, spare_key("cpu", 0, level))
        dead.kill()
        fresh = runners.take("cpu", 0, level)
        assert fresh is not dead and fresh.alive() and _hello(fresh)["op"] == "hello"
        fresh.kill()
        spare = _wait_for_spare(runners, spare_key("cpu", 0, level))
    finally:
        runners.close()
    spare.proc.wait(timeout=10)
    assert not spare.alive()


def test_a_spare_whose_descriptor_number_was_reused_is_never_handed_out():
    """Other code in this process closed one of a spare's descriptor numbers and another file took it (a double close
    in a test did this; the next probe runner's judge waited 540 s for descriptors that could not be sent): the spare
    is killed, not given to a judge, and the file that took the number is left open."""
    level = _level()
    runners = WarmRunners(spares=1)
    read_end, write_end = os.pipe()
    try:
        runners.warm("cpu", 0, level)
        spare = _wait_for_spare(runners, spare_key("cpu", 0, level))
        assert spare.intact()
        os.dup2(read_end, spare.handle.from_runner)  # closes the spare's number and reuses it for another file
        assert not spare.intact()
        fresh = runners.take("cpu", 0, level)
        assert fresh is not spare and fresh.intact() and _hello(fresh)["op"] == "hello"
        spare.proc.wait(timeout=10)  # killed
        os.fstat(spare.handle.from_runner)  # the other file's number: still open
        os.write(write_end, b"x")
        assert os.read(spare.handle.from_runner, 1) == b"x"
        fresh.kill()
    finally:
        runners.close()
        for fd in (read_end, write_end, spare.handle.from_runner):
            os.close(fd)


def test_an_evaluation_kills_its_runner():
    from drk.examples import example_candidate, example_problem
    from drk.gym import evaluate
    from drk.gym.warm import shared_runners

    level = _level()
    runners = shared_runners()
    runners.warm("cpu", 0, level)
    spare = _wait_for_spare(runners, spare_key("cpu", 0, level))  # the runner the evaluation will take
    result = evaluate(example_problem("relu2"), example_candidate("wrong"), device="cpu")
    assert result.status == "incorrect"
    with runners._lock:
        assert spare not in runners._idle[spare_key("cpu", 0, level)]
    with pytest.raises(ProcessLookupError):  # killed and reaped when its evaluation ended
        os.kill(spare.proc.pid, 0)


def test_a_spares_gpu_start_runs_under_the_gpu_lock_shared(tmp_path):
    """The starter lets a spare create its CUDA context only while holding the GPU lock shared: a timing asked for
    meanwhile is not quiet; after the hello it is."""
    import os
    import threading
    import time

    from drk.gym import GpuTimingLock, wire
    from drk.gym.warm import RunnerHandle, _gpu_start

    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    seen: dict[str, bool] = {}

    def fake_runner() -> None:
        wire.send_frame(from_w, {"op": "imported"})
        request, _ = wire.recv_frame(to_r, deadline=None, max_blob_bytes=0)
        probe = GpuTimingLock(0, lock_dir=tmp_path)
        seen["quiet_during_start"] = probe.acquire(quiet_wait_s=0.2)
        probe.release()
        seen["init"] = request.get("op") == "init"
        wire.send_frame(from_w, {"op": "gpu_ready"})
        time.sleep(0.2)  # the profiler's start-up: outside the lock
        probe = GpuTimingLock(0, lock_dir=tmp_path)
        seen["quiet_after_gpu_ready"] = probe.acquire(quiet_wait_s=1.0)
        probe.release()
        wire.send_frame(from_w, {"op": "hello"})

    thread = threading.Thread(target=fake_runner)
    thread.start()
    handle = RunnerHandle(0, to_w, from_r, -1)
    _gpu_start(handle, GpuTimingLock(0, lock_dir=tmp_path))
    thread.join(10)
    assert seen == {"quiet_during_start": False, "init": True, "quiet_after_gpu_ready": True} and handle.greeted
    timer = GpuTimingLock(0, lock_dir=tmp_path)
    assert timer.acquire(quiet_wait_s=1.0) is True
    timer.release()
    for fd in (to_r, to_w, from_r, from_w):
        os.close(fd)


def test_runner_handles_carry_whether_their_hello_was_read():
    """A handle reaches the judge as its descriptors plus (pid, greeted): rebuilt the same, output area or not."""
    from drk.gym.warm import RunnerHandle, handle_from_fds

    for fds in ([10, 11, 12], [10, 11, 12, 13]):
        handle = RunnerHandle(123, *fds[:3], area=fds[3] if len(fds) > 3 else -1, greeted=True)
        copy = handle_from_fds(handle.pid, list(handle.fds()), handle.greeted)
        assert copy == handle and copy.pid == 123 and copy.greeted is True and list(copy.fds()) == fds


class _FakeStarted:
    """Stands in for a StartedRunner: alive until killed."""

    def __init__(self) -> None:
        self.killed = False

    def alive(self) -> bool:
        return not self.killed

    def intact(self) -> bool:
        return True

    def kill(self) -> None:
        self.killed = True


def _fake_gpu_starts(monkeypatch, finish_s: float) -> dict:
    """Spares whose GPU start-up takes ``finish_s``; records how many ran at once and any on-demand start."""
    import threading
    import time

    from drk.gym import warm

    seen = {"active": 0, "most": 0, "on_demand": 0, "calls": 0}
    lock = threading.Lock()

    def finish(started, gpu_lock) -> None:
        with lock:
            seen["active"] += 1
            seen["calls"] += 1
            seen["most"] = max(seen["most"], seen["active"])
        time.sleep(finish_s)
        with lock:
            seen["active"] -= 1

    def on_demand(*args, **kwargs):
        seen["on_demand"] += 1
        return _FakeStarted()

    monkeypatch.setattr(warm, "spawn_runner", lambda *a, **k: _FakeStarted())
    monkeypatch.setattr(warm, "finish_gpu_start", finish)
    monkeypatch.setattr(warm, "_gpu_lock", lambda key: object())
    monkeypatch.setattr(warm, "start_runner", on_demand)
    return seen


def test_spares_start_side_by_side(monkeypatch):
    """One start-up at a time capped a pool of 8 on an H200 at ~22 evaluations/min: spares' start-ups overlap."""
    seen = _fake_gpu_starts(monkeypatch, finish_s=0.5)
    runners = WarmRunners(spares=6)
    try:
        runners.warm("cuda", 0, "uid")
        got = [runners.take("cuda", 0, "uid") for _ in range(6)]
    finally:
        runners.close()
    assert all(isinstance(r, _FakeStarted) for r in got)
    assert seen["most"] > 1 and seen["on_demand"] == 0


def test_take_waits_for_a_spare_already_starting_instead_of_starting_another(monkeypatch):
    seen = _fake_gpu_starts(monkeypatch, finish_s=1.0)
    runners = WarmRunners(spares=1)
    try:
        runners.warm("cuda", 0, "uid")
        first = runners.take("cuda", 0, "uid")  # none idle yet, one pending: waited for
        assert seen["on_demand"] == 0 and first.alive()
        none_left = runners.take("cuda", 0, "uid", wait_s=0.0)  # no waiting allowed: started here
        assert seen["on_demand"] == 1 and none_left.alive()
    finally:
        runners.close()


def _fake_gated_runner(answer: str = "gpu_ready"):
    """A handle and a thread playing a gated spare: imported, then ``answer`` to the init, then hello."""
    import os
    import threading

    from drk.gym import wire
    from drk.gym.warm import RunnerHandle

    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()

    def play() -> None:
        wire.send_frame(from_w, {"op": "imported"})
        wire.recv_frame(to_r, deadline=None, max_blob_bytes=0)
        wire.send_frame(from_w, {"op": answer})
        if answer == "gpu_ready":
            wire.send_frame(from_w, {"op": "hello"})

    thread = threading.Thread(target=play, daemon=True)
    thread.start()
    return RunnerHandle(0, to_w, from_r, -1), (to_r, to_w, from_r, from_w)


def test_each_spare_creates_its_context_in_a_shared_hold_of_its_own(tmp_path):
    import os
    import threading

    from drk.gym import GpuTimingLock, warm

    runners = [_fake_gated_runner() for _ in range(3)]
    warm.spare_start_stats(reset=True)
    threads = [threading.Thread(target=warm._gpu_start, args=(h, GpuTimingLock(0, lock_dir=tmp_path)))
               for h, _ in runners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    stats = warm.spare_start_stats()
    assert all(h.greeted for h, _ in runners) and stats["contexts"] == 3
    for _, fds in runners:
        for fd in fds:
            os.close(fd)


def test_a_closed_pools_queued_spares_are_killed_not_started(monkeypatch):
    """Spares still queued when the pool closes get no GPU start (a starter thread once ran a queued job after the
    test that queued it had ended, with the real start function: an exception in a daemon thread)."""
    import time

    seen = _fake_gpu_starts(monkeypatch, finish_s=0.5)
    spawned: list[_FakeStarted] = []
    from drk.gym import warm

    monkeypatch.setattr(warm, "spawn_runner", lambda *a, **k: spawned.append(_FakeStarted()) or spawned[-1])
    monkeypatch.setattr(warm.os, "cpu_count", lambda: 2)  # PARALLEL_STARTS at once, whatever the machine
    runners = WarmRunners(spares=12)  # more than start at once: some wait in the queue
    runners.warm("cuda", 0, "uid")
    time.sleep(0.2)  # the first PARALLEL_STARTS are starting, the rest queued
    runners.close()
    time.sleep(1.5)  # the starts under way end; the queued ones are taken off the queue
    assert len(spawned) == 24  # 12 of each role
    assert seen["calls"] <= warm.PARALLEL_STARTS  # only those under way when it closed were started
    assert all(s.killed for s in spawned)  # every spare of a closed pool is killed, started or not


def test_a_larger_reservation_starts_more_spares_at_once(monkeypatch):
    """A pool of 8 on an H200 waited 15.6 s of 21.8 s per evaluation for runners with 4 starts at once: a pool that
    reserves more spares starts more at once, up to one per two host CPUs."""
    from drk.gym import warm

    seen = _fake_gpu_starts(monkeypatch, finish_s=0.6)
    monkeypatch.setattr(warm.os, "cpu_count", lambda: 16)
    assert warm.parallel_starts(2) == warm.PARALLEL_STARTS and warm.parallel_starts(16) == 8
    monkeypatch.setattr(warm.os, "cpu_count", lambda: 2)
    assert warm.parallel_starts(16) == warm.PARALLEL_STARTS  # a small host keeps the floor
    monkeypatch.setattr(warm.os, "cpu_count", lambda: 16)
    runners = WarmRunners(spares=2)
    try:
        assert runners.finishers == warm.PARALLEL_STARTS
        runners.reserve(16)
        assert runners.finishers == 8
        runners.warm("cuda", 0, "uid")
        got = [runners.take("cuda", 0, "uid") for _ in range(16)]
    finally:
        runners.close()
    assert all(isinstance(r, _FakeStarted) for r in got) and seen["on_demand"] == 0
    assert seen["most"] == 8  # more than the old 4 side by side, never more than the cap


def test_a_probe_runner_comes_from_spares_that_skip_the_profilers_warm_up(monkeypatch):
    """A probe runner never profiles: its spares skip CUPTI's ~5 s start-up (H200, results/gpu/2026-12-01-s15), so
    an evaluation's second runner is ready sooner."""
    from drk.gym import warm

    _fake_gpu_starts(monkeypatch, finish_s=0.05)

    def spawn(device, gpu_index, level, gated=False, profiler=True):
        started = _FakeStarted()
        started.profiler = profiler  # which role this spare was started for
        return started

    monkeypatch.setattr(warm, "spawn_runner", spawn)
    runners = WarmRunners(spares=1)
    try:
        runners.warm("cuda", 0, "uid")
        main, probe = runners.take("cuda", 0, "uid"), runners.take("cuda", 0, "uid", profiler=False)
        assert main.profiler is True and probe.profiler is False  # each from the spares of its own role
        assert spare_key("cuda", 0, "uid", profiler=False) != spare_key("cuda", 0, "uid")
        assert spare_key("cpu", 0, "uid", profiler=False) != spare_key("cpu", 0, "uid")  # two spares per CPU evaluation
    finally:
        runners.close()


def test_the_runners_command_line_says_whether_to_warm_the_profiler(monkeypatch):
    from drk.gym import runner, warm

    plain = warm.runner_argv(3, 4, "cuda", 0, 5, gated=True, profiler=False)
    assert plain[-3:] == ["area=5", "wait", "noprofiler"]
    assert "noprofiler" not in warm.runner_argv(3, 4, "cuda", 0, 5, gated=True, profiler=True)
    seen = {}

    def setup(kind, gpu_index, fd_in=None, fd_out=None, warm_profiler=True):
        seen.update(kind=kind, fds=(fd_in, fd_out), warm_profiler=warm_profiler)
        raise SystemExit  # what the runner does with the device is not this test's business

    monkeypatch.setattr(runner, "_setup_device", setup)
    for argv, expected in ((plain, False), (warm.runner_argv(3, 4, "cuda", 0, 5, gated=False, profiler=True), True)):
        with pytest.raises(SystemExit):
            runner.main(["runner.py", *argv[4:]])  # sys.argv of `python -m drk.gym.runner ...`
        assert seen["warm_profiler"] is expected and seen["kind"] == "cuda"
    assert seen["fds"] == (None, None)  # not gated: the runner does not wait for the starter
