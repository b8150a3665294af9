"""Feedback tokens: four tokens from a real result or a table row, from a closed vocabulary."""

import pytest

from drk.gym import EvalResult
from drk.mini2.feedback import (
    FEEDBACK_TOKENS,
    PR_EDGES,
    SPEEDUP_EDGES,
    bucket,
    feedback_tokens,
    own_kernel_kind,
    torch_kernel_kind,
)


@pytest.mark.parametrize("value, token", [
    (None, "SPD:NA"), (float("nan"), "SPD:NA"), (0.3, "SPD:<0.5"), (0.5, "SPD:0.5-0.8"), (0.99, "SPD:0.8-1"),
    (1.0, "SPD:1-1.25"), (1.6, "SPD:1.25-2"), (2.5, "SPD:2-3"), (3.0, "SPD:>=3"), (40.0, "SPD:>=3"),
])
def test_speedup_buckets(value, token):
    assert bucket("SPD", SPEEDUP_EDGES, value) == token


def test_pr_buckets():
    assert [bucket("PR", PR_EDGES, v) for v in (0.0, 0.3, 0.6, 0.9, 1.0, None)] == [
        "PR:<0.25", "PR:0.25-0.5", "PR:0.5-0.75", "PR:0.75-0.95", "PR:>=0.95", "PR:NA"]


@pytest.mark.parametrize("name, kind", [
    ("k0_tanh_scale_softmax_bias_tanh", "softmax"), ("k1_sub_mean_relu", "sub_mean"), ("k_gelu", "pointwise"),
    ("k2_silu_layernorm_sub_max", "layernorm"), ("k0_bias_rsum", "reduce"), ("k3_sub_max", "sub_max"),
])
def test_own_kernel_kinds(name, kind):
    assert own_kernel_kind(name) == kind


@pytest.mark.parametrize("name, kind", [  # names as torch.profiler reported them on the H200
    ("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel",
     "gemm"),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>", "softmax"),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>", "layernorm"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>>>",
     "reduce"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_cuda>", "pointwise"),
    ("Memcpy DtoD", "other"),
])
def test_torch_kernel_kinds(name, kind):
    assert torch_kernel_kind(name) == kind


def test_tokens_from_a_result_a_dict_and_the_vocabulary():
    result = EvalResult(status="correct", speedup=2.4, coverage=1.0,
                        profile=[{"name": "k0_tanh_softmax", "device_ms": 0.04, "share": 1.0, "own": True}])
    assert feedback_tokens(result) == ["S:correct", "SPD:2-3", "PR:>=0.95", "TOP:own:softmax"]
    cpu = EvalResult(status="correct", kernel_ms=4.0)  # the interpreter: no speedup, no profile
    assert feedback_tokens(cpu) == ["S:correct", "SPD:NA", "PR:NA", "TOP:NA"]
    row = {"status": "hacked", "speedup": 0.97, "coverage": 0.0, "top_kernel": "void softmax_warp_forward",
           "top_own": False}
    assert feedback_tokens(row) == ["S:hacked", "SPD:0.8-1", "PR:<0.25", "TOP:torch:softmax"]
    assert feedback_tokens({"status": "compile_error"}) == ["S:compile_error", "SPD:NA", "PR:NA", "TOP:NA"]
    for tokens in (feedback_tokens(result), feedback_tokens(cpu), feedback_tokens(row)):
        assert set(tokens) <= set(FEEDBACK_TOKENS)
    assert len(FEEDBACK_TOKENS) == len(set(FEEDBACK_TOKENS)) == 7 + 8 + 6 + 17
    with pytest.raises(ValueError):
        feedback_tokens({"status": "great"})
