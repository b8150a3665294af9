"""The per-GPU timing lock serialises across processes and is freed when its holder dies."""

import contextlib
import multiprocessing
import os
import pickle
import signal
import threading
import time

from drk.gym import GpuTimingLock
from drk.gym.gpu_lock import physical_gpu_id


def _hold(lock: GpuTimingLock, seconds: float, started) -> None:
    lock.acquire()
    started.set()
    time.sleep(seconds)
    lock.release()


def _blocked_for(lock: GpuTimingLock) -> float:
    start = time.monotonic()
    with lock:
        return time.monotonic() - start


def _start_holder(lock: GpuTimingLock, seconds: float):
    """Another process that takes ``lock`` and keeps it for ``seconds``; returns once it holds it."""
    ctx = multiprocessing.get_context("spawn")
    started = ctx.Event()
    holder = ctx.Process(target=_hold, args=(lock, seconds, started))
    holder.start()
    assert started.wait(60)
    return holder


@contextlib.contextmanager
def _fake_runner(serve, seconds_left: float = 30.0):
    """A ``judge.RunnerProcess`` over pipes whose other end ``serve(requests_fd, answers_fd)`` plays the runner in a
    thread (a ``sleep`` stands in for its process, whose group ``close()`` kills); everything closed after."""
    import subprocess

    from drk.gym import judge

    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    out_r, out_w = os.pipe()
    stand_in = subprocess.Popen(["sleep", "30"], start_new_session=True)

    class Handle:
        pid, to_runner, from_runner, output = stand_in.pid, to_w, from_r, out_r

    thread = threading.Thread(target=serve, args=(to_r, from_w))
    thread.start()
    process = judge.RunnerProcess(Handle(), time.monotonic() + seconds_left, max_blob_bytes=0)
    try:
        yield process
    finally:
        thread.join(5)
        process.close()
        stand_in.wait(timeout=10)
        for fd in (to_r, from_w, out_w):
            os.close(fd)


def _a_timing_beside_a_request(process, tmp_path, after_s: float) -> tuple[list, float, bool]:
    """Another evaluation's timing that starts ``after_s`` into a ``go`` request to ``process``: the request's
    answers, how long the timing waited for the GPU, and whether it was quiet."""
    answers: list = []
    asker = threading.Thread(target=lambda: answers.append(
        process.request({"op": "go"}, gpu_lock=GpuTimingLock(0, lock_dir=tmp_path))))
    asker.start()
    time.sleep(after_s)
    timer = GpuTimingLock(0, lock_dir=tmp_path)
    t0 = time.monotonic()
    quiet = timer.acquire(quiet_wait_s=3.0)
    waited = time.monotonic() - t0
    timer.release()
    asker.join(5)
    return answers, waited, quiet


def test_second_process_waits_for_the_holder(tmp_path):
    lock = GpuTimingLock(0, lock_dir=tmp_path)
    holder = _start_holder(lock, 1.0)
    assert _blocked_for(lock) > 0.5
    holder.join(10)


def test_killed_holder_does_not_wedge_the_gpu(tmp_path):
    lock = GpuTimingLock(0, lock_dir=tmp_path)
    holder = _start_holder(lock, 600.0)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join(10)
    assert _blocked_for(lock) < 5.0


def test_locks_are_per_physical_gpu_and_picklable(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert physical_gpu_id(1) == "5"
    a, b = GpuTimingLock(0, lock_dir=tmp_path), GpuTimingLock(1, lock_dir=tmp_path)
    assert a.path != b.path and a.path.endswith("drk-gpu-3.lock")
    with a:
        copy = pickle.loads(pickle.dumps(a))  # what the sandbox child receives: the path, not the open descriptor
    assert copy.path == a.path and copy._fd is None
    with b, copy:  # a different GPU does not block; the copy can take a's lock once a released it
        pass


def _later(fn, delay: float = 0.3) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(delay), fn()))
    thread.start()
    return thread


def test_shared_holders_overlap(tmp_path):
    a, b, timer = (GpuTimingLock(0, lock_dir=tmp_path) for _ in range(3))
    t0 = time.monotonic()
    with a.shared(), b.shared():  # two evaluations' GPU work at once: neither waits for the other
        assert time.monotonic() - t0 < 1.0
        assert timer.acquire(quiet_wait_s=0.2) is False  # a timing now would not be quiet
        timer.release()
    assert timer.acquire(quiet_wait_s=1.0) is True  # both left: quiet at once
    timer.release()


def test_a_timing_waits_for_shared_work_in_flight_then_keeps_new_work_out(tmp_path):
    worker, timer, newcomer = (GpuTimingLock(0, lock_dir=tmp_path) for _ in range(3))
    ctx = worker.shared()
    ctx.__enter__()
    _later(lambda: ctx.__exit__(None, None, None), 0.3)
    t0 = time.monotonic()
    assert timer.acquire(quiet_wait_s=5.0) is True  # quiet: the work in flight finished
    assert time.monotonic() - t0 >= 0.25
    entered = []
    thread = threading.Thread(target=lambda: newcomer.shared().__enter__() or entered.append(time.monotonic()))
    thread.start()
    time.sleep(0.3)
    assert not entered  # new GPU work waits while the timing runs
    released_at = time.monotonic()
    timer.release()
    thread.join(5)
    assert entered and entered[0] >= released_at


def test_a_stuck_shared_holder_cannot_stall_timings(tmp_path):
    stuck, timer = GpuTimingLock(0, lock_dir=tmp_path), GpuTimingLock(0, lock_dir=tmp_path)
    with stuck.shared():
        t0 = time.monotonic()
        assert timer.acquire(quiet_wait_s=0.3) is False  # goes ahead, and says the GPU was not quiet
        assert 0.25 <= time.monotonic() - t0 < 3
        timer.release()


def test_shared_is_a_no_op_inside_the_own_timing(tmp_path):
    timer = GpuTimingLock(0, lock_dir=tmp_path)
    assert timer.acquire(quiet_wait_s=1.0)
    with timer.shared():  # the timing's own requests must not wait for the timing
        assert timer.held
    timer.release()
    assert not timer.held


def test_a_slow_request_holds_the_gpu_lock_shared_only_for_a_while(tmp_path, monkeypatch):
    """A request whose runner does not answer (a hung kernel) lets the GPU lock go after SHARED_HOLD_S: timings of
    other evaluations are then quiet again long before the request ends."""
    from drk.gym import judge, wire

    monkeypatch.setattr(judge, "SHARED_HOLD_S", 0.2)

    def slow_runner(requests: int, answers: int) -> None:
        wire.recv_frame(requests, deadline=None, max_blob_bytes=0)
        time.sleep(1.0)
        wire.send_frame(answers, {"ok": True})

    with _fake_runner(slow_runner) as process:
        answers, waited, quiet = _a_timing_beside_a_request(process, tmp_path, after_s=0.05)
    assert quiet and waited < 0.8  # quiet after ~0.2 s, not after the whole second
    assert answers and answers[0][0] == {"ok": True}


def test_a_timing_cannot_hold_the_gpu_past_its_limit(tmp_path):
    """A candidate slow only while timed (attacker review 2026-12-01) keeps its timing's exclusive hold; after
    max_hold_s the lock lets go, other evaluations' GPU work proceeds, and the timing says it was not quiet."""
    timer, other = GpuTimingLock(0, lock_dir=tmp_path), GpuTimingLock(0, lock_dir=tmp_path)
    assert timer.acquire(quiet_wait_s=1.0, max_hold_s=0.3) is True
    t0 = time.monotonic()
    with other.shared():  # waits for the limit, not for the (never coming) release
        waited = time.monotonic() - t0
    assert 0.2 <= waited < 3 and timer.expired and not timer.held
    timer.release()  # late: a no-op
    assert timer.acquire(quiet_wait_s=1.0, max_hold_s=5) is True and not timer.expired
    timer.release()
    assert not timer.expired


def test_locks_pickle_without_their_state(tmp_path):
    lock = GpuTimingLock(0, lock_dir=tmp_path)
    assert lock.acquire(quiet_wait_s=1.0)
    copy = pickle.loads(pickle.dumps(lock))
    assert copy.path == lock.path and not copy.held
    lock.release()


def test_waiting_for_another_evaluations_timing_does_not_use_up_the_candidates_time(tmp_path):
    """A request that waits at the GPU lock behind another evaluation's timing gets that time added to its limit: an
    honest candidate must not be charged `timeout` for a neighbour's long timing."""
    from drk.gym import wire

    def runner(requests: int, answers: int) -> None:
        wire.recv_frame(requests, deadline=None, max_blob_bytes=0)
        wire.send_frame(answers, {"ok": True})

    neighbour = GpuTimingLock(0, lock_dir=tmp_path)
    assert neighbour.acquire(quiet_wait_s=1.0)
    threading.Thread(target=lambda: (time.sleep(0.8), neighbour.release())).start()
    with _fake_runner(runner, seconds_left=0.4) as process:  # less than the wait
        answer, _ = process.request({"op": "go"}, gpu_lock=GpuTimingLock(0, lock_dir=tmp_path))
    assert answer == {"ok": True}


def test_an_answer_sent_slowly_holds_the_gpu_lock_no_longer_than_a_slow_one(tmp_path, monkeypatch):
    """A runner that starts its answer at once and trickles the rest (attacker's view: every byte of an answer but
    the first is a free hold) held the GPU lock shared until the answer ended, up to its whole time limit, and every
    other evaluation's timing on the GPU then went ahead not quiet (or, with a longer quiet wait, waited that long).
    The hold ends when the answer starts; its bytes are read outside it."""
    from drk.gym import judge, wire

    monkeypatch.setattr(judge, "SHARED_HOLD_S", 0.2)

    def trickling_runner(requests: int, answers: int) -> None:
        wire.recv_frame(requests, deadline=None, max_blob_bytes=0)
        frame = wire.encode_frame({"ok": True})
        os.write(answers, frame[:1])
        time.sleep(1.5)
        os.write(answers, frame[1:])

    with _fake_runner(trickling_runner) as process:
        answers, waited, quiet = _a_timing_beside_a_request(process, tmp_path, after_s=0.1)
    assert quiet and waited < 0.8, "the GPU lock was held while the answer trickled in"
    assert answers and answers[0][0] == {"ok": True}


def test_a_timing_past_its_hold_takes_the_lock_again_before_its_next_round(tmp_path, monkeypatch):
    """Attacker review 21 (2): a candidate slow in its warm-up round made its timing's exclusive hold expire
    (``TIMING_HOLD_S``), and the judge went on with its reference rounds holding nothing, inside another
    evaluation's timing, which reported itself quiet. Now every side's round first takes the lock again: the other
    timing runs in between, no reference round overlaps it, and this timing says it was not quiet."""
    from types import SimpleNamespace

    import torch

    from drk.gym import EvalConfig, judge
    from drk.gym.secret import SeedStream

    monkeypatch.setattr(judge, "TIMING_HOLD_S", 0.3)
    lock = GpuTimingLock(0, lock_dir=tmp_path)
    session = object.__new__(judge.Session)
    session.cfg = EvalConfig(timing_trials=30, timing_round_calls=5, warmup=5, timing_hidden_rate=0.0)
    session.ref = SimpleNamespace(device=torch.device("cuda"), seeds=SeedStream(b"hold"))
    session.runner = session.probe_runner = SimpleNamespace(deadline=time.monotonic() + 100)
    session.timing_lock, session.plan, session.burst, session.output_bytes = lock, None, 0, 4
    session.calibration, session.calibrated_burst = None, 0
    reference_rounds: list[tuple[float, float, bool]] = []
    other_hold: list[float] = []
    other = GpuTimingLock(0, lock_dir=tmp_path)

    def other_timing() -> None:  # another evaluation's timing, waiting at the turnstile meanwhile
        other.acquire(quiet_wait_s=5.0)
        start = time.monotonic()
        time.sleep(0.2)
        other_hold.extend([start, time.monotonic()])
        other.release()

    def reference_round(specs, pick, lates, flushes, burst, starved, scales):
        start = time.monotonic()
        held = lock.held
        time.sleep(0.01)
        reference_rounds.append((start, time.monotonic(), held))
        lates.extend([0.0] * len(specs))
        flushes.extend([0.0] * len(specs))
        return [1.0] * len(specs), 10.0, [], []

    candidate_rounds = []

    def candidate_round(specs, lazy, burst_cycles):
        candidate_rounds.append(lock.held)
        if len(candidate_rounds) == 1:  # the warm-up: slow past the hold, with another timing waiting
            threading.Thread(target=other_timing, daemon=True).start()
            time.sleep(0.6)
        n = len(specs)
        return {"times_ms": [1.0] * n, "late_ms": [0.0] * n, "flush_ms": [0.0] * n}, 10.0

    session.reference_round, session.candidate_round = reference_round, candidate_round
    session.check_round = lambda *args: (0.0, 0.0)
    result = session.measure()
    assert len(reference_rounds) == 7 and all(held for _, _, held in reference_rounds)
    assert all(candidate_rounds)
    assert other_hold, "the other evaluation's timing never ran"
    start, end = other_hold
    assert not any(s < end and e > start for s, e, _ in reference_rounds), "a reference round ran in its timing"
    assert result["timing_quiet"] is False
    assert not lock.held
