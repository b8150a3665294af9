"""The judge's reading of a crashed candidate's stack dump: the candidate wrote that text, so it is parsed defensively."""

from drk.gym.judge import candidate_frames

PATH = "/tmp/drk_cand/candidate.py"
SOURCE = "import os\n\nclass ModelNew:\n    def forward(self, x):\n        os._exit(3)\n"


def test_the_candidates_frames_are_found_with_their_code():
    dump = (f'Fatal Python error: Aborted\n  File "/usr/lib/python3.11/threading.py", line 320 in wait\n'
            f'  File "{PATH}", line 5 in forward\n  File "{PATH}", line 99 in helper\n')
    assert candidate_frames(dump, PATH, SOURCE) == (
        "  candidate.py line 5, in forward: os._exit(3)\n  candidate.py line 99, in helper: ")
    assert candidate_frames(dump, PATH, SOURCE, max_lines=1).count("\n") == 0
    assert candidate_frames(dump, "/elsewhere.py", SOURCE) == ""


def test_forged_lines_are_ignored_not_errors():
    assert candidate_frames(f'  File "{PATH}", line {"9" * 5000} in forward\n', PATH, SOURCE) == ""


def test_a_pathological_line_is_read_in_linear_time():
    """A backtracking pattern took ~6 s on a 64 KiB line of 'File "' (attacker review, 2026-12-02); on this 1 MiB
    line it would take minutes (quadratic), so the old parser makes this test hang rather than pass."""
    assert candidate_frames('File "' * 180_000 + "\n" + f'File "{PATH}", line 5 in forward', PATH, SOURCE) == (
        "  candidate.py line 5, in forward: os._exit(3)")
