"""The kernel-design language: grammar, invalid programs, layouts and canonical forms."""

import pytest

from drk.mini2.language import (
    PROGRAM_TOKENS,
    Program,
    ProgramError,
    all_programs,
    canonical,
    canonical_programs,
    effective_ops,
    layout_key,
    parse,
    segments,
    task_tokens,
)
from drk.mini2.tasks import all_tasks, task_by_name

TASKS = all_tasks()


def test_vocabulary_and_program_count():
    assert len(PROGRAM_TOKENS) == 13
    programs = all_programs()
    assert len(programs) == len(set(programs)) == 23
    assert all(parse(str(p)) == p for p in programs)
    assert {len(p.tokens) for p in programs} == {1, 3, 4}


@pytest.mark.parametrize("text", ["FUSE BL W4", "LAZY", "DECOY", "FALLBACK", "EW BS W8", "FUSE BL W8 SWAP"])
def test_parse_accepts_strings_and_sequences(text):
    assert parse(text) == parse(text.split()) == parse(parse(text))
    assert str(parse(text)) == text


@pytest.mark.parametrize("tokens, status", [
    ("", "format_error"),
    ("FUSE BL W16", "format_error"),  # unknown token
    ("fuse BL W4", "format_error"),
    ("FUSE BL", "compile_error"),  # missing warps
    ("FUSE W4 BL", "compile_error"),  # wrong order
    ("BL FUSE W4", "compile_error"),
    ("LAZY BL", "compile_error"),  # shortcuts take no arguments
    ("SPLIT BL W4 SWAP", "compile_error"),  # mutations apply to FUSE BL only
    ("FUSE BS W4 DROP", "compile_error"),
    ("FUSE BL W4 SWAP DROP", "compile_error"),
    ("FUSE BL W4 W8", "compile_error"),
])
def test_invalid_programs_are_scored_without_a_gpu(tokens, status):
    with pytest.raises(ProgramError) as info:
        parse(tokens)
    assert info.value.status == status


def test_canonical_programs_count_and_idempotence():
    total = 0
    for task in TASKS:
        programs = canonical_programs(task)
        assert 19 <= len(programs) <= 23
        assert len({layout_key(task, p) for p in programs}) == len(programs)
        for p in all_programs():
            c = canonical(task, p)
            assert c in programs and canonical(task, c) == c and layout_key(task, c) == layout_key(task, p)
        total += len(programs)
    assert total == 838  # the verdict table's size


def test_layouts_of_one_task():
    task = task_by_name("m2_15_Tanh_Scale_Softmax_Bias_Tanh")  # tanh, scale, softmax, bias, tanh

    def names(program):
        return [(s.backend, [op.name for _, op in s.ops]) for s in segments(task, program)]

    assert names("FUSE BL W4") == [("triton", ["tanh", "scale", "softmax", "bias", "tanh"])]
    assert names("SPLIT BL W4") == [("triton", ["tanh", "scale"]), ("triton", ["softmax", "bias", "tanh"])]
    assert len(names("PEROP BS W4")) == 5
    assert names("EW BL W4") == [("triton", ["tanh", "scale"]), ("torch", ["softmax"]), ("triton", ["bias", "tanh"])]
    assert segments(task, "LAZY") == ()
    swapped = [op.name for _, op in effective_ops(task, parse("FUSE BL W4 SWAP"))]
    dropped = [op.name for _, op in effective_ops(task, parse("FUSE BL W4 DROP"))]
    k = task.swap_at
    assert swapped[k:k + 2] == [task.ops[k + 1].name, task.ops[k].name]
    assert len(dropped) == len(task.ops) - 1


def test_equal_layouts_merge_to_the_first_plan():
    task = task_by_name("m2_10_Matmul_LayerNorm_SiLU_Scale")  # the only row op comes first: SPLIT == FUSE
    assert canonical(task, "SPLIT BS W8") == Program("FUSE", "BS", "W8")
    task = task_by_name("m2_20_SubMax_SiLU_RowSum")
    assert canonical(task, "PEROP BL W4") != canonical(task, "FUSE BL W4")


def test_task_tokens():
    task = task_by_name("m2_04_Matmul_Bias_Scale_SiLU_GELU_RowSum")
    assert task_tokens(task) == ["MM", "OP_bias", "OP_scale", "OP_silu", "OP_gelu", "OP_rsum", "DIM_M"]
