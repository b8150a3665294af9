"""The CUDA digest kernel (:mod:`drk.gym.digest_kernel`), run on CPU tensors by Triton's interpreter: its four sums
are the float64 sums of the same values with :func:`~drk.gym.digest_kernel.hashed_signs` as the weights, in every
dtype it reads, at sizes that are not a whole number of its blocks. On a GPU the same is checked against the CPU
digest (``tests/gym/test_gpu.py``)."""

import pytest
import torch

from drk.gym import digest_kernel


def _float64_sums(value: torch.Tensor, seed: int) -> list[float]:
    x = value.reshape(-1).double()
    w = digest_kernel.hashed_signs(0, x.numel(), seed, x.device).double()
    return [x.sum().item(), (x * w).sum().item(), x.abs().sum().item(), (x * x).sum().item()]


@pytest.mark.parametrize("dtype", digest_kernel.KERNEL_DTYPES)
@pytest.mark.parametrize("numel", [1, digest_kernel.BLOCK - 1, 2 * digest_kernel.BLOCK + 17])
def test_the_kernel_takes_the_float64_sums_with_the_hashed_weights(dtype, numel):
    x = torch.randn(numel, generator=torch.Generator().manual_seed(numel)) * 50
    value = x > 0 if dtype == torch.bool else x.to(dtype)
    got = digest_kernel.fused_sums(value, 12345).tolist()
    want = _float64_sums(value, 12345)
    exact = not value.is_floating_point()  # integers and booleans sum exactly in float64 at these sizes
    assert got == (want if exact else pytest.approx(want, rel=1e-12, abs=1e-9)), dtype


def test_an_empty_tensor_sums_to_zero():
    assert digest_kernel.fused_sums(torch.empty(0), 3).tolist() == [0.0, 0.0, 0.0, 0.0]


def test_hashed_signs_depend_on_the_position_and_the_seed_only():
    """The weights of positions ``a..b`` are the same whichever range they are drawn in (the torch path draws them a
    chunk at a time), are +-1 about half each, and another seed gives other weights."""
    whole = digest_kernel.hashed_signs(0, 10_000, 5, torch.device("cpu"))
    assert torch.equal(digest_kernel.hashed_signs(3_000, 4_000, 5, torch.device("cpu")), whole[3_000:7_000])
    assert set(whole.unique().tolist()) == {-1, 1} and abs(whole.double().mean().item()) < 0.05
    other = digest_kernel.hashed_signs(0, 10_000, 6, torch.device("cpu"))
    assert abs((whole.double() * other.double()).mean().item()) < 0.05
    far = digest_kernel.hashed_signs(2**31 - 8, 16, 5, torch.device("cpu"))  # past 31 bits of position
    assert set(far.unique().tolist()) <= {-1, 1} and not torch.equal(far, whole[:16])


def test_a_permuted_tensor_does_not_digest_alike():
    """A tensor with two blocks swapped, or reversed, keeps its plain sum but not its weighted one."""
    x = torch.randn(3 * digest_kernel.BLOCK)
    swapped = torch.cat([x[digest_kernel.BLOCK:2 * digest_kernel.BLOCK], x[:digest_kernel.BLOCK],
                         x[2 * digest_kernel.BLOCK:]])
    base = digest_kernel.fused_sums(x, 9)
    for other in (swapped, x.flip(0)):
        sums = digest_kernel.fused_sums(other, 9)
        assert sums[0].item() == pytest.approx(base[0].item(), abs=1e-9) and sums[1].item() != base[1].item()
