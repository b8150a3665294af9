"""What a candidate's data can make of a verdict is bounded (attacker review 7, 2026-12-02): its length, the numbers
it is computed from, and whether it is cached."""


import pytest

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, EvalResult, ResultCache, evaluate, isolation, wire
from drk.gym.judge import MAX_VERDICT_ERROR_CHARS, _validate_round


def test_a_claimed_output_layout_cannot_inflate_the_verdicts_error():
    """A wrong kernel whose runner claimed an output 'shape' of one 4 MB string: the layout message quoted its repr,
    a 17 MB error in the result, every cache entry and record."""
    try:
        isolation.available_level("auto")
    except isolation.IsolationUnavailable as exc:
        pytest.skip(str(exc))
    source = example_candidate("attack_error_bloat")
    result = evaluate(example_problem("relu2"), source, device="cpu", config=EvalConfig(timeout_s=120))
    assert result.status == "incorrect" and not result.env_error, (result.status, (result.error or "")[:300])
    assert len(result.error) <= MAX_VERDICT_ERROR_CHARS + 16


@pytest.mark.parametrize("claimed", [1e308, 86_400_001.0, -1.0, float("nan"), True])
def test_impossible_call_times_break_the_protocol(claimed):
    """Times of 1e308 ms each summed to inf; under the authors' policy the mean of the timing gaps (-inf and +inf)
    then raised in the judge: an uncharged env_error. Such an answer is now the candidate's broken protocol."""
    answer = {"times_ms": [1.0, claimed], "late_ms": [0.0, 0.0], "flush_ms": [0.0, 0.0], "outputs": [[], []],
              "inputs": [[], []]}
    with pytest.raises(wire.WireError):
        _validate_round(answer, 2)
    answer["times_ms"] = [1.0, 86_400_000.0]
    assert _validate_round(answer, 2) is answer
    for field in ("late_ms", "flush_ms"):  # the unseen intervals are bounded alike
        with pytest.raises(wire.WireError):
            _validate_round({**answer, field: [0.0, claimed]}, 2)
    with pytest.raises(wire.WireError):  # a round answer without its flush times is malformed
        _validate_round({k: v for k, v in answer.items() if k != "flush_ms"}, 2)


def test_whether_a_result_is_cached_depends_on_its_flag_not_its_text(tmp_path):
    """A candidate's own error text that began with "[drk]" kept its verdict out of the cache (judged again on
    every resubmission); only the environment's flag decides."""
    cache = ResultCache(tmp_path)
    forged = EvalResult(status="runtime_error", error="[drk] environment failure in stage 'hacking': (its text)")
    assert cache.put("a" * 64, forged) and cache.get("a" * 64).error == forged.error
    assert not cache.put("b" * 64, EvalResult(status="runtime_error", error="anything", env_error=True))


CRASH_QUOTING_LINE_3 = '''import os, sys
import torch, torch.nn as nn, triton, triton.language as tl
#{padding}
class ModelNew(nn.Module):
    def forward(self, x):
        # forged faulthandler frames pointing at line 3, then death: the judge quotes the candidate's lines
        sys.stderr.write(("  File \\"%s\\", line 3 in forward\\n" % __file__) * 4)
        sys.stderr.flush()
        os._exit(1)
'''


def test_a_crash_cannot_quote_the_candidates_long_lines_into_the_verdict():
    """A process that died has its last candidate lines quoted in the error: four forged frames pointing at a
    195,000-character line made an error of 780,000 characters (attacker review 8, 2026-12-02)."""
    try:
        isolation.available_level("auto")
    except isolation.IsolationUnavailable as exc:
        pytest.skip(str(exc))
    source = CRASH_QUOTING_LINE_3.format(padding="A" * 195_000)
    result = evaluate(example_problem("relu2"), source, device="cpu", config=EvalConfig(timeout_s=120))
    assert result.status == "runtime_error" and not result.env_error, (result.status, (result.error or "")[:300])
    assert "candidate.py line 3" in result.error  # still says where
    assert len(result.error) <= MAX_VERDICT_ERROR_CHARS + 16
