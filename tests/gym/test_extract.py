"""Finding the candidate module in a reply (drk.gym.extract): same blocks as the fence regex it replaced, in linear
time (attacker review 7, 2026-12-02: a fence followed by 150k spaces and no newline held the caller's GIL for 10.8 s
in ``extract_code``, which runs in the caller, before any size limit, in ``Pool.map``'s cache key; at 600k spaces an
honest evaluation beside it in the same Pool became an ``env_error``)."""

import random
import re
import subprocess
import sys

from drk.gym.extract import extract_code

# the expression extract_code used until 2026-12-02: the specification of which blocks a reply has
_OLD_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def _old_extract(reply):
    if not reply or not reply.strip():
        return None
    blocks = _OLD_FENCE.findall(reply)
    if blocks:
        return blocks[-1]
    if "```" in reply:
        tail = reply.rsplit("```", 1)[1]
        return tail.split("\n", 1)[1] if "\n" in tail else None
    return reply


def test_the_same_blocks_as_the_fence_expression_on_generated_replies():
    pieces = ["```", "````", "```python", "```Python3", "```py", "``` py \t", "```bash", "```python3x", "```\t",
              "\n", "\r\n", " ", "\t", "A = 1", "def f():\n    return 2", "text", "`", "``"]
    rng = random.Random(0)
    for _ in range(20000):
        reply = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert extract_code(reply) == _old_extract(reply), repr(reply)


def test_documented_cases():
    assert extract_code("text\n```python\nA = 1\n```\nmore\n```python\nB = 2\n```") == "B = 2\n"
    assert extract_code("```bash\nls\n```\n```python\nA = 1\n```") == _old_extract(
        "```bash\nls\n```\n```python\nA = 1\n```")
    assert extract_code("A = 1") == "A = 1" and extract_code("  \n") is None
    assert extract_code("```python\nA = 1") == "A = 1"  # truncated generation


def _finishes(reply, seconds):
    """In a child process: a regex holds the GIL, so a thread could not even time it out."""
    script = "import sys; from drk.gym.extract import extract_code; extract_code(sys.stdin.read())"
    try:
        subprocess.run([sys.executable, "-c", script], input=reply, text=True, timeout=seconds, check=True)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_long_runs_after_fences_cost_linear_time():
    """A few seconds would be a pathological (quadratic) scan: each reply below is 1-2 M characters, which a linear
    scan reads in milliseconds."""
    good = "```python\nA = 1\n```\n"
    for reply in (good + "```" + " " * 1_000_000 + "ok",
                  good + "```" + " " * 500_000 + "python" + " " * 500_000 + "ok",
                  good + "```x" * 300_000,
                  good + ("```" + " " * 50 + "\n") * 20_000,
                  "```\n" + "`" * 1_000_000,
                  good + "``` \t" * 250_000 + "\n"):
        assert _finishes(reply, 30.0), reply[:40]  # a child importing torch included; the old scan: minutes
