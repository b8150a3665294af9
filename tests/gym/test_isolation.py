"""The candidate's sandbox, checked directly: what a process inside can see and touch."""

import os
import subprocess
import sys

import pytest

from drk.gym import isolation

PROBE = r"""
import os, json, signal
pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
try:
    open(os.environ['TARGET'], 'w').write('forged')
    wrote = True
except OSError:
    wrote = False
try:
    os.kill(int(os.environ['PARENT']), 0)
    can_signal = True
except OSError:
    can_signal = False
import socket
try:
    socket.create_connection(('1.1.1.1', 53), timeout=1)
    net = True
except OSError:
    net = False
print(json.dumps({'uid': os.getuid(), 'pids': pids, 'wrote': wrote, 'can_signal': can_signal, 'net': net}))
"""


@pytest.mark.parametrize("level", ["uid", "namespace"])
def test_sandbox_hides_processes_files_and_network(tmp_path, level):
    why = isolation._probe(level)
    if why is not None:
        pytest.skip(why)
    from pathlib import Path

    target = Path(__file__).with_name("forged_cache_entry.json")  # a host path the sandbox can see (read-only)
    env = {**isolation.sandbox_env("cpu"), "TARGET": str(target), "PARENT": str(os.getpid())}
    claim = isolation.claim_sandbox_uid()
    uid = claim.uid
    cmd = isolation.sandbox_command(level, [sys.executable, "-s", "-c", PROBE], uid)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    finally:
        claim.release()
    assert out.returncode == 0, out.stderr
    import json

    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(seen["pids"]) <= 3  # bubblewrap's init, the probe (and maybe a helper): not the caller, not pytest
    assert not seen["wrote"] and not target.exists()  # read-only view of the host's files
    assert not seen["net"]
    if level == "uid":
        assert seen["uid"] == uid != os.getuid() and seen["uid"] >= isolation.SANDBOX_UID_BASE


FORK_BOMB = r"""
import os, time
children = 0
for _ in range(isolation_limit + 100):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children += 1
print(children)
"""


def test_a_fork_bomb_stops_at_the_process_limit():
    if isolation._probe("uid") is not None:
        pytest.skip(isolation._probe("uid"))
    script = f"isolation_limit = {isolation.MAX_PROCESSES}\n" + FORK_BOMB
    cmd = isolation.sandbox_command("uid", [sys.executable, "-s", "-c", script])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=isolation.sandbox_env("cpu"))
    assert out.returncode == 0, out.stderr[-500:]
    assert int(out.stdout.strip().splitlines()[-1]) < isolation.MAX_PROCESSES  # stopped by the limit, not the loop


def test_auto_never_silently_drops_to_no_sandbox():
    try:
        assert isolation.available_level("auto").level in ("uid", "namespace")
    except isolation.IsolationUnavailable as exc:
        assert "process" in str(exc)  # says how to opt out explicitly
    assert isolation.available_level("process").level == "process"
    with pytest.raises(ValueError):
        isolation.available_level("chroot")


def test_sandbox_uids_differ_between_runners(tmp_path):
    claims = [isolation.claim_sandbox_uid(str(tmp_path)) for _ in range(100)]  # live runners hold their claims
    assert len({c.uid for c in claims}) == 100 and min(c.uid for c in claims) >= isolation.SANDBOX_UID_BASE
    for claim in claims:
        claim.release()


def _claim_in_child(lock_dir, queue) -> None:
    from drk.gym import isolation as iso

    claims = [iso.claim_sandbox_uid(lock_dir) for _ in range(50)]
    queue.put([c.uid for c in claims])
    queue.get()  # hold them until the parent has claimed its own


def test_sandbox_uids_are_unique_host_wide_while_claimed(tmp_path):
    """Two callers on one host (here: two processes) never hold the same sandbox uid at once; a released uid can be
    claimed again (attacker review 2026-12-01: a pid-derived uid collided across two pools, and a thread bomb in one
    made the other's honest runner fail to start a thread)."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_claim_in_child, args=(str(tmp_path), queue))
    child.start()
    theirs = set(queue.get(timeout=60))
    mine = [isolation.claim_sandbox_uid(str(tmp_path)) for _ in range(50)]
    assert len(theirs) == 50 and len({c.uid for c in mine}) == 50 and not theirs & {c.uid for c in mine}
    queue.put("done")
    child.join(30)
    import fcntl
    import os

    path = os.path.join(str(tmp_path), "drk-uids", str(mine[0].uid))
    probe = os.open(path, os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):  # held: nobody else gets it
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        mine[0].release()
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released (the runner was killed): free again
    finally:
        os.close(probe)
    assert all(isolation.SANDBOX_UID_BASE <= c.uid < isolation.SANDBOX_UID_BASE + isolation.UID_RANGE for c in mine)


def test_the_bundled_solutions_are_not_visible_inside_the_sandbox():
    """A candidate must not be able to read the answer key of its problem (drk/problems/solutions)."""
    level = isolation.available_level().level
    if level == "process":
        pytest.skip("no sandbox on this machine")
    solutions = isolation.hidden_paths()[0]
    assert any(os.scandir(solutions))  # the host has them
    probe = f"import os; print(len(os.listdir({solutions!r})))"
    cmd = isolation.sandbox_command(level, [sys.executable, "-s", "-c", probe])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=isolation.sandbox_env("cpu"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"


def test_the_checkouts_other_directories_are_not_visible_inside_the_sandbox():
    """Bundled solutions also sit verbatim in committed run records (results/mini/heldout/*.jsonl), scripted-rollout
    files and git's packs: a candidate that read one and ran it as its own code was judged `correct` (attacker
    review, 2026-12-02). Inside the sandbox the checkout shows only the drk package (and a venv inside it)."""
    level = isolation.available_level().level
    if level == "process":
        pytest.skip("no sandbox on this machine")
    root = os.path.dirname(os.path.dirname(os.path.abspath(isolation.__file__)))
    root = os.path.dirname(root)
    if not os.path.isfile(os.path.join(root, "pyproject.toml")):
        pytest.skip("drk is installed, not a checkout")
    present = [d for d in ("results", ".git", "tests") if os.path.isdir(os.path.join(root, d))]
    assert present, "the checkout has directories to hide"
    probe = (f"import os, drk.gym.runner; print([len(os.listdir(os.path.join({root!r}, d))) for d in {present!r}],"
             f" len(os.listdir(os.path.join({root!r}, 'drk'))) > 0)")
    cmd = isolation.sandbox_command(level, [sys.executable, "-s", "-c", probe])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=isolation.sandbox_env("cpu"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{[0] * len(present)} True"


@pytest.mark.parametrize("level", ["uid", "namespace"])
def test_drks_lock_files_are_out_of_the_sandboxs_sight(monkeypatch, request, level):
    """With DRK_LOCK_DIR outside /tmp, a candidate could open a GPU lock file read-only and flock it, stalling every
    evaluation on that GPU (attacker review, 2026-12-01): the locks' directory is empty inside the sandbox."""
    import tempfile

    from drk.gym import GpuTimingLock

    why = isolation._probe(level)
    if why is not None:
        pytest.skip(why)
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("no /var/tmp to put locks outside /tmp")
    import shutil

    base = tempfile.mkdtemp(dir="/var/tmp", prefix="drk-lock-test-")
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    monkeypatch.setenv("DRK_LOCK_DIR", base)
    lock = GpuTimingLock(0)
    assert lock.acquire(quiet_wait_s=0.1)
    lock.release()
    locks = os.path.dirname(lock.path)
    assert os.path.exists(lock.path) and (os.stat(locks).st_mode & 0o777) == 0o700
    assert (locks in isolation.hidden_paths(level)) == (level == "namespace")
    probe = (f"import os, fcntl; print(sorted(os.listdir({locks!r})));\n"
             f"try:\n    fd = os.open({lock.path!r}, os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); print('locked')\n"
             f"except OSError as e:\n    print('refused', e.errno)")
    cmd = isolation.sandbox_command(level, [sys.executable, "-s", "-c", probe])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                         env={**isolation.sandbox_env("cpu"), "DRK_LOCK_DIR": base})
    assert out.returncode == (1 if level == "uid" else 0), out.stderr
    # namespace level: an empty directory in its place; uid level: another uid cannot enter a 0700 directory
    expected = ["[]", "refused 2"] if level == "namespace" else []
    if level == "uid":
        assert "PermissionError" in out.stderr or "Permission denied" in out.stderr
    else:
        assert out.stdout.split("\n")[:2] == expected


@pytest.mark.parametrize("level", ["uid", "namespace"])
def test_registered_secrets_read_empty_inside_the_sandbox(tmp_path, level):
    """drk serve's task store is mode 0600, which does not stop a candidate at the namespace level (it has the
    caller's uid): it read every client's kernels and verdicts (attacker review, 2026-12-02)."""
    why = isolation._probe(level)
    if why is not None:
        pytest.skip(why)
    from drk.serve.store import TaskStore

    base = tmp_path if not str(tmp_path).startswith("/tmp/") else None
    if base is None:  # /tmp is the sandbox's own: put the store where the sandbox sees the host
        if not os.access("/var/tmp", os.W_OK):
            pytest.skip("no /var/tmp")
        import tempfile

        base = tempfile.mkdtemp(dir="/var/tmp", prefix="drk-store-test-")
    os.chmod(base, 0o755)
    store = TaskStore(os.path.join(base, "tasks.sqlite"))
    try:
        assert os.path.getsize(store.path) > 0
        probe = f"import os; print(os.path.getsize({str(store.path)!r}), os.path.getsize({str(store.path) + '-wal'!r}))"
        cmd = isolation.sandbox_command(level, [sys.executable, "-s", "-c", probe])
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=isolation.sandbox_env("cpu"))
    finally:
        store.close()
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0"]


def test_the_runners_environment_is_the_callers_only_where_named(monkeypatch):
    """A runner gets none of the caller's environment but what torch and CUDA need: the allocator's settings pass
    (a caller that sets expandable_segments means its runners too), a secret does not."""
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("DRK_SOME_SECRET", "s3cret")
    env = isolation.sandbox_env("cuda")
    assert env["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert "DRK_SOME_SECRET" not in env and env["TRITON_INTERPRET"] == "0"
