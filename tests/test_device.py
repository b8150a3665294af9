"""The one device/dtype rule of training, SFT and HF evaluation."""

import pytest

from drk import device
from drk.train.config import RLConfig
from drk.train.sft import SFTRunConfig


@pytest.mark.parametrize("has_gpu, want", [(True, ("cuda", "bfloat16")), (False, ("cpu", "float32"))])
def test_auto_follows_the_gpu(monkeypatch, has_gpu, want):
    monkeypatch.setattr(device, "cuda_available", lambda: has_gpu)
    assert (device.resolve_device("auto"), device.resolve_dtype("auto", "auto")) == want
    cfg = RLConfig(device="auto", dtype="auto")
    assert (cfg.resolved_device(), cfg.resolved_dtype()) == want


def test_explicit_choices_are_kept(monkeypatch):
    monkeypatch.setattr(device, "cuda_available", lambda: False)
    assert device.resolve_device("cuda:1") == "cuda:1"
    assert device.resolve_dtype("auto", "cuda:1") == "bfloat16" and device.resolve_dtype("float32", "cuda") == "float32"
    assert RLConfig(device="cpu", dtype="bfloat16").resolved_dtype() == "bfloat16"
    with pytest.raises(ValueError, match="dtype"):
        SFTRunConfig(data="x.jsonl", dtype="float16")
