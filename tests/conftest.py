import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402
import torch  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
if not HAS_CUDA:
    # Without a GPU, Triton kernels run in its interpreter; it must be chosen before triton is imported.
    os.environ.setdefault("TRITON_INTERPRET", "1")


def pytest_collection_modifyitems(config, items):
    if HAS_CUDA:
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)


#: Seconds the test process may take to exit after its session ends (killing spare runners and judges: seconds).
EXIT_WATCHDOG_S = float(os.environ.get("DRK_TEST_EXIT_WATCHDOG_S", "300"))


def pytest_unconfigure(config):
    """Past EXIT_WATCHDOG_S after the session, print every thread's stack and the live child processes, and exit 1:
    a process that hangs on its way out (a thread or child it waits for) fails the run with the place it hangs,
    instead of running into CI's time limit with nothing said (a CI run of 381c282 printed its summary and then
    used up its 90 minutes)."""
    import faulthandler
    import sys
    import threading
    import time

    def watchdog() -> None:
        time.sleep(EXIT_WATCHDOG_S)
        err = sys.__stderr__
        print(f"\n[tests] the test process did not exit within {EXIT_WATCHDOG_S:.0f} s of its session's end",
              file=err, flush=True)
        print("[tests] its child processes:", file=err, flush=True)
        os.system(f"ps -o pid,stat,etime,cmd --ppid {os.getpid()} >&2")
        faulthandler.dump_traceback(file=err, all_threads=True)
        os._exit(1)

    threading.Thread(target=watchdog, name="drk-tests-exit-watchdog", daemon=True).start()
