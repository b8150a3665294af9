"""The judge's output comparison: chunked (bounded float64 temporaries), and independent of free GPU memory."""

import math

import pytest
import torch

from drk.gym import correctness as C
from drk.gym import rounds
from drk.gym.judge import _digests_agree


def _cases():
    gen = torch.Generator().manual_seed(0)
    for n in (1, 5, 17, 4099):
        base = torch.randn(n, generator=gen)
        yield base, base.clone()  # equal
        off = base.clone()
        off[n // 2] += 1.0
        yield base, off  # one element wrong
        noisy = base + 0.02 * torch.randn(n, generator=gen)
        yield base, noisy  # many slightly wrong
        nan_out = base.clone()
        nan_out[-1] = float("nan")
        yield base, nan_out  # a NaN where the reference has none
        nan_ref = base.clone()
        nan_ref[0] = float("nan")
        wrong_late = nan_ref.clone()
        wrong_late[-1] += 3.0
        yield nan_ref, wrong_late  # the reference's own NaN, and a wrong element


@pytest.mark.parametrize("chunk", [1, 4, 1000])
def test_chunked_comparison_says_what_the_whole_one_says(chunk):
    for expected, got in _cases():
        whole = C.compare_outputs([expected], [got], 0.01, 0.01, chunk=2**40)
        parts = C.compare_outputs([expected], [got], 0.01, 0.01, chunk=chunk)
        assert (parts.ok, parts.message) == (whole.ok, whole.message)
        assert parts.max_abs_err == whole.max_abs_err or (
            math.isnan(parts.max_abs_err) and math.isnan(whole.max_abs_err))


def test_the_worst_element_is_found_across_chunks():
    expected = torch.zeros(2, 3)
    got = expected.clone()
    got[0, 1], got[1, 2] = 0.5, 4.0
    result = C.compare_outputs([expected], [got], 0.01, 0.01, chunk=2)
    assert not result.ok and result.max_abs_err == 4.0
    assert "2/6 elements differ" in result.message and "at index (1, 2): got 4, expected 0" in result.message


def test_complex_outputs_are_compared_in_both_parts():
    """A cast to float64 keeps a complex number's real part: wrong imaginary parts passed (attacker review 13)."""
    expected = torch.tensor([1 + 1j, 2 + 2j], dtype=torch.complex64)
    wrong = torch.tensor([1 - 5j, 2 + 9j], dtype=torch.complex64)
    result = C.compare_outputs([expected], [wrong], 0.01, 0.01)
    assert not result.ok and result.max_abs_err == 7.0 and "at index (1, 1)" in result.message, result
    assert C.compare_outputs([expected], [expected.clone()], 0.01, 0.01).ok
    assert C.compare_outputs([expected], [expected.conj().conj()], 0.01, 0.01).ok  # a lazily conjugated view
    assert not C.compare_outputs([expected], [expected.conj()], 0.01, 0.01).ok


def test_out_of_memory_while_comparing_compares_in_host_memory(monkeypatch):
    """A candidate that holds the GPU's memory made the judge's float64 copies fail: an uncharged env_error for a
    wrong answer. The comparison now moves to host memory instead."""
    calls = []
    real = C._tensor_stats

    def out_of_memory_once(exp, out, *args):
        calls.append((exp.device.type, out.device.type))
        if len(calls) == 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB")
        return real(exp, out, *args)

    monkeypatch.setattr(C, "_tensor_stats", out_of_memory_once)
    expected = torch.zeros(8)
    got = expected.clone()
    got[3] = 1.0
    result = C.compare_outputs([expected], [got], 0.01, 0.01)
    assert not result.ok and "at index (3,)" in result.message
    assert calls == [("cpu", "cpu"), ("cpu", "cpu")]


def _device_is_full(monkeypatch):
    """Every move to a device fails as a full GPU does (this machine has none to fill)."""
    def full(self, *args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 512.00 MiB")

    monkeypatch.setattr(torch.Tensor, "to", full)


def test_fetched_outputs_and_references_stay_in_host_memory_when_the_device_is_full(monkeypatch):
    from drk.gym import wire
    from drk.gym.judge import _on_device

    original = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    blob = bytearray(original.numpy().tobytes())
    meta = wire.tensor_meta(original)
    area = bytearray(wire.AREA_ALIGN + len(blob))
    area[wire.AREA_ALIGN:] = blob
    _device_is_full(monkeypatch)
    from_pipe = wire.tensor_from_blob(meta, blob, "cuda")
    from_area, nbytes = wire.tensor_from_area({**meta, "area": wire.AREA_ALIGN}, area, "cuda")
    kept = _on_device([original, 3], torch.device("cuda"))
    assert torch.equal(from_pipe, original) and torch.equal(from_area, original) and nbytes == len(blob)
    assert kept[0] is original and kept[1] == 3


def test_a_profile_that_claims_nothing_is_pr_zero_not_missing():
    """A correct candidate that launched nothing while profiled had PR None, which PRS's default reads as a
    configuration error: one such candidate stopped a whole training step (attacker review, 2026-12-02)."""
    from drk.gym.judge import claimed_coverage

    own = {"relu2_kernel"}
    assert claimed_coverage({"relu2_kernel": 1.0, "aten::mul": 3.0}, own)[0] == 0.25
    for claim in ({}, None, [1, 2], {"relu2_kernel": float("nan")}, {"relu2_kernel": -1.0}, {"x": True}):
        coverage, kernels = claimed_coverage(claim, own)
        assert coverage == 0.0 and kernels == []
    assert claimed_coverage({"relu2_kernel": 1e308, "other": 1e308}, own)[0] == 0.5  # capped: finite


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool])
def test_integer_and_boolean_outputs_are_compared_exactly(dtype):
    """Attacker review 16: with the floats' tolerance (atol + rtol * |ref|) an integer answer off by one wherever
    |y| >= 100, and an argmax off by one past index 100, were ``correct``. Integers and booleans have no rounding to
    forgive: the element-wise comparison and the timed calls' digests both hold them exactly."""
    high = 2 if dtype == torch.bool else 250
    expected = torch.randint(0, high, (4096,), generator=torch.Generator().manual_seed(1)).to(dtype)
    off = expected.clone()
    big = expected.to(torch.int64) >= 100 if dtype != torch.bool else torch.arange(4096) == 7
    off[big] = (expected[big].to(torch.int64) - 1).to(dtype) if dtype != torch.bool else ~expected[big]
    assert C.compare_outputs([expected], [expected.clone()], 0.01, 0.01).ok
    result = C.compare_outputs([expected], [off], 0.01, 0.01)
    assert not result.ok and "atol=0.0, rtol=0.0" in result.message
    assert C.tolerance_for(expected, 0.01, 0.01) == (0.0, 0.0)
    assert C.tolerance_for(expected.float(), 0.01, 0.01) == (0.01, 0.01)
    reference = rounds.reference_digests([expected], 3, 0.01, 0.01)
    assert _digests_agree(reference, rounds.digest_values([expected.clone()], 3))[0]
    assert not _digests_agree(reference, rounds.digest_values([off], 3))[0]
    if dtype == torch.int64:  # one element off by one among large values: no rounding room hides it
        large = expected * 1_000_000
        one_off = large.clone()
        one_off[17] += 1
        reference = rounds.reference_digests([large], 3, 0.01, 0.01)
        assert _digests_agree(reference, rounds.digest_values([large.clone()], 3))[0]
        assert not _digests_agree(reference, rounds.digest_values([one_off], 3))[0]


def test_int64_values_beyond_float64s_exact_range_are_compared_exactly():
    """Attacker review 19: the element-wise comparison cast to float64, where 2**60 and 2**60 + 1 are one value: an
    int64 answer off by one there was equal (a problem with hashes or large counts)."""
    expected = torch.tensor([2**60, 2**55, -(2**62), 7], dtype=torch.int64)
    off = expected + torch.tensor([1, 3, -1, 0])
    assert C.compare_outputs([expected], [expected.clone()], 0.01, 0.01).ok
    result = C.compare_outputs([expected], [off], 0.01, 0.01)
    assert not result.ok and "3/4 elements differ" in result.message, result.message
    # the worst element's values as integers (a float's 6 digits showed -5.80947e+06 on both sides)
    assert f"got {2**60 + 1}, expected {2**60}" in result.message, result.message


def _near_zero_cases():
    yield torch.zeros(7)
    yield torch.full((5,), 0.005)  # within atol of 0
    yield torch.tensor([0.0, 0.0, 0.02])  # one element beyond it
    yield torch.tensor([0.0, float("nan")])  # NaN is not close to 0
    yield torch.tensor([0.0, float("inf")])
    yield torch.tensor([0.009999, -0.0101])
    yield torch.zeros(3, dtype=torch.int64)
    yield torch.tensor([0, 0, 1], dtype=torch.int32)
    yield torch.tensor([False, False])
    yield torch.randn(4099, generator=torch.Generator().manual_seed(1)) * 1e-3


@pytest.mark.parametrize("chunk", [1, 2, 3, 1000, 2**40])
def test_near_zero_says_what_allclose_to_zeros_says(chunk):
    """``near_zero`` (would all-zero outputs pass as these?) decides a probe's "no evidence": chunked, it must say
    what ``allclose`` of whole float64 copies said."""
    for t in _near_zero_cases():
        whole = bool(torch.allclose(torch.zeros_like(t, dtype=torch.float64), t.to(torch.float64), atol=0.01,
                                    rtol=0.01))
        assert C.near_zero(t, 0.01, 0.01, chunk=chunk) == whole, (t, chunk)


def test_an_empty_tensor_is_near_zero():
    assert C.near_zero(torch.empty(0), 0.01, 0.01)


def test_a_purely_imaginary_answer_is_not_near_zero():
    """A complex answer is near zero only if both its parts are (a float64 cast keeps the real part alone)."""
    assert not C.near_zero(torch.tensor([0 + 1j, 0 + 2j]), 0.01, 0.01)
    assert C.near_zero(torch.tensor([0.001 + 0.001j]), 0.01, 0.01)
