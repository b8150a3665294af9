"""Operating-system isolation of the candidate's process (the runner).

The runner is started with `bubblewrap <https://github.com/containers/bubblewrap>`_ (Debian package
``bubblewrap``), never forked from the judge (so it holds none of the judge's memory):

* its own PID namespace (it sees only itself and its children: not the judge, not the caller, not other
  evaluations; it cannot signal or ``/proc/<pid>/fd`` any of them), its own network (none), IPC and UTS namespaces;
* a read-only view of the filesystem and a private writable ``/tmp`` (tmpfs), where the runner writes the candidate's
  source when it is handed over; the result cache, the judge's temp files and other evaluations' files are not
  writable;
* ``--die-with-parent`` and ``--new-session``: it dies with the process that started it and cannot inject keystrokes
  into a terminal; every process it starts dies with its PID namespace;
* when the caller is root: a user id of its own (:func:`claim_sandbox_uid`: a free one from ``DRK_SANDBOX_UID`` =
  200000 up, outside the range of real accounts, held host-wide while its runner lives), set with ``setpriv``
  before bubblewrap starts, no capabilities,
  no-new-privileges, and at most :data:`MAX_PROCESSES` processes and threads for that uid (a fork bomb stops
  there, and cannot starve other evaluations, which run as other uids). A non-root caller gets a user namespace
  instead (same user id outside, no capabilities, no process limit: it would count the caller's own threads).
* no core dumps (a crashing candidate must not write gigabytes).

Levels, strongest first: ``uid`` (another uid + namespaces), ``namespace`` (namespaces, same uid), ``process``
(a plain child process: the only option without bubblewrap; it can see and signal the caller's processes, so it is
refused unless asked for). :func:`available_level` probes once per process which one works here.
"""

from __future__ import annotations

import fcntl
import functools
import glob
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass

from drk.gym.gpu_lock import lock_root

LEVELS = ("uid", "namespace", "process")
SANDBOX_UID_BASE = int(os.environ.get("DRK_SANDBOX_UID", "200000"))
MAX_PROCESSES = 512
TMPFS_BYTES = 1 * 2**30
SHM_BYTES = 256 * 2**20
CANDIDATE_DIR = "/tmp/.drk_candidate"


class IsolationUnavailable(RuntimeError):
    """The isolation asked for cannot be set up on this machine (the message says what is missing)."""


@dataclass(frozen=True)
class Isolation:
    level: str
    detail: str


def _bwrap() -> str | None:
    return shutil.which("bwrap")


def _base_bwrap(level: str, uid: int | None) -> list[str]:
    cmd = [
        _bwrap() or "bwrap", "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        # bubblewrap's --size applies to the next tmpfs only: both are bounded (tmpfs pages count against no process)
        "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm",
    ]
    for path in _paths_under_private_mounts():  # a checkout or venv under /tmp must stay visible (read-only)
        cmd += ["--ro-bind", path, path]
    for path in hidden_paths(level):  # answer keys and lock files: an empty directory in their place
        cmd += ["--tmpfs", path]
    for path in sorted(_hidden_files):  # registered secrets (hide_from_sandbox): an empty file in their place
        if os.path.isfile(path):
            cmd += ["--ro-bind", "/dev/null", path]
    cmd += ["--chdir", "/tmp"]
    for dev in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri")):
        cmd += ["--dev-bind", dev, dev]
    if level == "uid":
        uid = short_lived_uid() if uid is None else uid
        cmd = ["prlimit", f"--nproc={MAX_PROCESSES}", "--", "setpriv", f"--reuid={uid}", f"--regid={uid}",
               "--clear-groups", *cmd]
    return ["prlimit", "--core=0", "--", *cmd]




#: Sandbox uids are claimed from ``SANDBOX_UID_BASE`` .. ``SANDBOX_UID_BASE + UID_RANGE``.
UID_RANGE = 100_000


@dataclass
class UidClaim:
    """A sandbox uid no other live runner on this host has, held by a ``flock`` until :meth:`release` (or until
    the holding process dies): runners of two callers on one host (two pools, two training runs) never share a uid,
    and so never share the per-uid process limit (a thread bomb in one evaluation once made a runner of another
    process, whose uid happened to be the same, fail to start a thread)."""

    uid: int
    fd: int | None

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)


def claim_sandbox_uid(lock_dir: str | None = None) -> UidClaim:
    """Claim a free sandbox uid host-wide (lock files under ``DRK_LOCK_DIR`` or the temp dir, like the GPU locks)."""
    directory = os.path.join(lock_dir or str(lock_root()), "drk-uids")
    os.makedirs(directory, exist_ok=True)
    start = secrets.randbelow(UID_RANGE)
    for i in range(UID_RANGE):
        uid = SANDBOX_UID_BASE + (start + i) % UID_RANGE
        fd = os.open(os.path.join(directory, str(uid)), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidClaim(uid, fd)
    raise OSError(f"no free sandbox uid among {UID_RANGE}")


def short_lived_uid() -> int:
    """A uid that was free a moment ago, for a sandbox that lives briefly (a probe): claimed and released at once."""
    claim = claim_sandbox_uid()
    claim.release()
    return claim.uid


_hidden_files: set[str] = set()


def hide_from_sandbox(*paths: str | os.PathLike) -> None:
    """Show these files empty inside every sandbox started from now on (those that exist then).

    For secrets of the caller's that a file mode cannot protect at the ``namespace`` level, where the candidate has
    the caller's uid: ``drk serve``'s task store holds every client's candidates and results (attacker review,
    2026-12-02: a candidate read it at that level)."""
    _hidden_files.update(os.path.abspath(p) for p in paths)


def hidden_paths(level: str = "namespace") -> list[str]:
    """Host directories the sandbox sees empty: drk's bundled *solutions* (hand-written kernels of the bundled
    problems), the rest of drk's checkout but the package and its environment (:func:`_checkout_directories`: run
    records and git's packs hold solutions too) and drk's lock files (:func:`drk.gym.gpu_lock.lock_root`). The rest
    of the host is visible read-only (the runner needs the interpreter, the environment and drk); a candidate that
    could read the solutions would copy the answer for its problem (an attacker review on 2026-12-01 read the
    checkout from inside the sandbox)."""
    solutions = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "problems", "solutions")
    hidden = [solutions] if os.path.isdir(solutions) else []
    hidden += [d for d in _checkout_directories() if level != "uid" or os.stat(d).st_mode & 0o001]
    # drk's lock files (GPU locks, sandbox uid claims): a candidate that could open one could flock it. Under /tmp or
    # /dev/shm they are out of sight already (the sandbox has its own).
    locks = str(lock_root())  # made (0700) now if missing: one made later would show through the view of /
    if level != "uid" and not locks.startswith(("/tmp/", "/dev/shm/")):
        hidden.append(locks)  # at the uid level its mode keeps the sandbox out (bubblewrap could not mount over it)
    return hidden


def _checkout_directories() -> tuple[str, ...]:
    """When drk runs from a checkout (a ``pyproject.toml`` beside the package): the checkout's directories but the
    package itself, its ``*.egg-info`` and any that hold the interpreter or its environment (a ``.venv``).

    The bundled solutions are also in committed run records (``results/mini/heldout/*.jsonl`` holds five verbatim),
    in scripted-rollout files a run writes, and in git's packs: a candidate that read one and ran it as its own code
    was judged `correct` (attacker review, 2026-12-02). The runner needs none of them. (A directory that is not
    traversable by others needs no hiding at the ``uid`` level: the sandbox's uid cannot enter it, nor could
    bubblewrap mount over it.) Read afresh for every sandbox: a run's output directory may appear at any time.
    """
    import sysconfig

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = os.path.dirname(package)
    if not os.path.isfile(os.path.join(root, "pyproject.toml")):
        return ()  # an installed drk: its neighbours are other packages
    needed = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.executable, *sysconfig.get_paths().values())
              if p}
    hidden = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        path = os.path.realpath(entry.path)
        if not entry.is_dir(follow_symlinks=False) or path == os.path.realpath(package) or entry.name.endswith(
                ".egg-info") or any(n == path or n.startswith(path + os.sep) for n in needed):
            continue
        hidden.append(entry.path)
    return tuple(hidden)


@functools.lru_cache(maxsize=1)
def _paths_under_private_mounts() -> tuple[str, ...]:
    """The interpreter, the environment and drk's own checkout where they live under ``/tmp`` or ``/dev/shm``,
    which the sandbox replaces with private mounts (a CI clone in /tmp, say)."""
    import sysconfig

    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    candidates = {package_root, sys.prefix, sys.base_prefix, os.path.dirname(sys.executable),
                  os.path.dirname(os.path.realpath(sys.executable)), *sysconfig.get_paths().values()}
    hidden = [p for p in candidates if p and os.path.isdir(p) and (p == "/tmp" or p.startswith(("/tmp/", "/dev/shm/")))]
    # keep only the outermost of nested paths
    return tuple(p for p in sorted(hidden) if not any(p != q and p.startswith(q + os.sep) for q in hidden))


def sandbox_command(level: str, argv: list[str], uid: int | None = None) -> list[str]:
    """The command line that runs ``argv`` at isolation ``level`` (``uid``: the ``uid`` level's user id; default
    :func:`short_lived_uid`; a runner passes the uid it claimed with :func:`claim_sandbox_uid`)."""
    if level == "process":
        return ["prlimit", "--core=0", "--", *argv] if shutil.which("prlimit") else list(argv)
    return [*_base_bwrap(level, uid), "--", *argv]


def sandbox_env(device: str) -> dict[str, str]:
    """The runner's whole environment: nothing of the caller's but what torch/CUDA need to start."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TRITON_CACHE_DIR": "/tmp/triton",
           "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor", "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1",
           "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"}
    # PYTORCH_CUDA_ALLOC_CONF: the caller's allocator settings hold in the runners too (expandable_segments can
    # shrink a process's reserve; the judge, a child of the caller, already has them)
    for key in ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "TRITON_PTXAS_PATH", "DRK_WARM_PROFILER",
                "PYTORCH_CUDA_ALLOC_CONF"):
        if key in os.environ:
            env[key] = os.environ[key]
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)
    env["TRITON_INTERPRET"] = "1" if device == "cpu" else "0"
    return env


@functools.cache
def _probe(level: str) -> str | None:
    """None when ``level`` works here (a sandboxed Python imports torch), else why it does not."""
    if level == "process":
        return None
    if _bwrap() is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if level == "uid" and os.geteuid() != 0:
        return "another user id needs root (this process is not root)"
    if shutil.which("setpriv") is None or shutil.which("prlimit") is None:
        return "setpriv and prlimit (util-linux) are needed"
    uid = short_lived_uid()
    cmd = sandbox_command(level, [sys.executable, "-s", "-c", "import os, torch; print(os.getuid())"], uid)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=sandbox_env("cpu"))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{level} sandbox failed to start: {exc}"
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        hint = ""
        if level == "uid" and "ermission denied" in done.stderr:
            hint = (f" (uid {uid} cannot read the Python install {sys.executable}; give its directories "
                    "o+x, e.g. chmod o+x /root, or install Python elsewhere)")
        return f"{level} sandbox failed: {why[0][:300]}{hint}"
    return None


def available_level(requested: str = "auto") -> Isolation:
    """The isolation to use for ``requested`` (``auto``: the strongest that works here, never ``process``).

    Raises:
        IsolationUnavailable: ``requested`` (or, for ``auto``, any sandbox) does not work here.
    """
    if requested == "process":
        return Isolation("process", "plain child process (no namespaces, same user): weak, asked for explicitly")
    wanted = ("uid", "namespace") if requested == "auto" else (requested,)
    if requested not in ("auto", *LEVELS):
        raise ValueError(f"isolation={requested!r}: choose 'auto' or one of {LEVELS}")
    reasons = []
    for level in wanted:
        why = _probe(level)
        if why is None:
            detail = {"uid": f"bubblewrap namespaces (pid, net, ipc, mount; read-only /) as a uid >= {SANDBOX_UID_BASE}",
                      "namespace": "bubblewrap namespaces (pid, net, ipc, mount; read-only /), same uid"}[level]
            return Isolation(level, detail)
        reasons.append(why)
    raise IsolationUnavailable("no candidate sandbox works here: " + "; ".join(reasons)
                               + ". EvalConfig(isolation='process') runs candidates unsandboxed (not for RL).")
