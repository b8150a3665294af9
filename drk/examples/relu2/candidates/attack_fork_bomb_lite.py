import os
import signal
import time

import torch
import torch.nn as nn

SLEEP_S = 600
_spawned = False


def _sleeper(new_session):
    try:
        if new_session:
            os.setsid()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        time.sleep(SLEEP_S)
    finally:
        os._exit(0)


def _spawn():
    """Four processes at most: two sleepers in our group, one short-lived middle child, one setsid grandchild."""
    for _ in range(2):
        if os.fork() == 0:
            _sleeper(new_session=False)
    middle = os.fork()
    if middle == 0:
        try:
            if os.fork() == 0:
                _sleeper(new_session=True)  # escapes our process group and session
        finally:
            os._exit(0)
    try:
        os.waitpid(middle, 0)
    except Exception:
        pass


class ModelNew(nn.Module):
    """Pure torch; on the first forward it forks two SIGTERM-ignoring sleepers (600 s) that keep every inherited fd
    open, and a setsid grandchild that sleeps 600 s outside the process group."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        global _spawned
        if not _spawned:
            _spawned = True
            try:
                _spawn()
            except Exception:
                pass
        return torch.relu(x) * 2.0
