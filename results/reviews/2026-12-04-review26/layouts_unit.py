"""Not an evaluation: direct_reads.location (runner side) then SandboxMemory.read's core (tensor_at + commitment) on
tensors of this very process, for many honest layouts and dtypes. Prints any layout whose read differs or fails."""
import os
import torch
from drk.gym import direct_reads as d

base = torch.randn(4096)
z = torch.complex(torch.randn(64), torch.randn(64))
cases = {
    "contiguous": base.clone(),
    "view2d": base.view(64, 64),
    "transposed": base.view(64, 64).t(),
    "slice_step2": base[::2],
    "col0_of_wide": torch.randn(256, 32)[:, 0],
    "expand_stride0": base[:64].unsqueeze(0).expand(64, 64),
    "expand_overlap_span_gt_numel": torch.randn(2000).as_strided((2, 100, 3), (1000, 1, 0)),
    "overlap_window": base.as_strided((100, 64), (8, 1)),
    "channels_last": torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last),
    "zero_dim": base.sum(),
    "empty": torch.empty(0, 5),
    "size1_odd_stride": base.as_strided((1, 64), (12345, 1)),
    "bool": base > 0,
    "int64": torch.randint(0, 100, (100,)),
    "bf16": base.to(torch.bfloat16),
    "fp16_strided": base.half()[1::3],
    "complex64": z,
    "complex_slice": z[::2],
    "conj_view": z.conj(),
    "neg_view(conj().imag)": z.conj().imag,
    "uint8": torch.randint(0, 255, (100,), dtype=torch.uint8),
    "float64": base.double(),
    "int8_strided": torch.randint(-5, 5, (64, 64), dtype=torch.int8)[:, ::7],
}
for name, t in cases.items():
    try:
        where = d.location(t)
    except Exception as exc:
        print(f"{name:32s} RUNNER-SIDE location() raised {type(exc).__name__}: {str(exc)[:90]}")
        continue
    try:
        got = d.tensor_at(os.getpid(), where, t.dtype, list(t.shape))
        ok_commit = where["sha256"] == d.commitment(got)
        same = torch.equal(got, t.resolve_conj().resolve_neg()) if t.dtype != torch.bool else torch.equal(got, t)
        print(f"{name:32s} committed={ok_commit} equal_to_logical={same}")
    except Exception as exc:
        print(f"{name:32s} JUDGE-SIDE read raised {type(exc).__name__}: {str(exc)[:90]}")
