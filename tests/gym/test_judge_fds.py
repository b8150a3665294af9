"""The judge's descriptor cleanup must not leave multiprocessing pointing at a closed descriptor number."""
import multiprocessing
import os
import tempfile
import warnings

from drk.gym import sandbox


def _child(path: str, answer) -> None:
    sandbox._close_inherited_fds(keep={answer.fileno()})
    fd = os.open(path, os.O_RDWR)  # takes the lowest free number, as the CUDA driver's files do in a judge
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from multiprocessing import resource_tracker

        try:
            resource_tracker.ensure_running()  # what torch.compile's first use of the tracker does
            error = None
        except OSError as exc:  # it closed a number that was no longer its own
            error = repr(exc)
    try:
        os.fstat(fd)
        still_open = True
    except OSError:
        still_open = False
    answer.send((error, still_open, os.path.getsize(path), [str(w.message) for w in caught]))


def test_a_judge_can_use_the_resource_tracker_without_touching_its_own_files() -> None:
    ctx = multiprocessing.get_context("forkserver")
    with tempfile.NamedTemporaryFile() as f:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_child, args=(f.name, child))
        proc.start()
        child.close()
        try:
            assert parent.poll(60), f"the child sent nothing (exit code {proc.join(5) or proc.exitcode})"
            error, still_open, size, warned = parent.recv()
        finally:
            proc.kill()
            proc.join(5)
    assert error is None, error
    assert still_open, "the tracker's probe closed a descriptor the judge had opened since"
    assert size == 0, "the tracker's probe was written into a file the judge had opened"
    assert not warned, warned
