"""HFPolicy on drk.models' tiny offline model (no hub access), plain and chat, with a LoRA adapter."""

import pytest

pytest.importorskip("transformers")

from drk.chat import PromptFormat  # noqa: E402
from drk.eval.context import Turn, build_messages, task_messages  # noqa: E402
from drk.eval.policies import render_plain  # noqa: E402
from drk.models import build_tiny_model  # noqa: E402

SOURCE = "class Model:\n    pass"


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return build_tiny_model(root / "chat"), build_tiny_model(root / "plain", chat_template=False)


def _conversation():
    problem = type("P", (), {"source": SOURCE})()
    return build_messages(task_messages(problem), [Turn(1, "```python\nA = 1\n```", "incorrect: diff 0.3", 0.0)])


def test_plain_rendering_is_the_trainers_transcript(tiny_dirs):
    from drk.eval.policies import HFPolicy

    policy = HFPolicy(str(tiny_dirs[1]), device="cpu", batch_size=2)
    fmt = PromptFormat(policy.tokenizer)
    expected = fmt.prompt_text(SOURCE) + "```python\nA = 1\n```" + fmt.feedback_text("incorrect: diff 0.3")
    assert policy.render(_conversation()) == expected == render_plain(_conversation(), bos=policy.tokenizer.bos_token or "")
    out = policy.generate([_conversation()] * 3, n=2, temperature=1.0, top_p=0.95, max_new_tokens=4)
    assert len(out) == 3 and all(len(r) == 2 and all(isinstance(x, str) for x in r) for r in out)
    again = policy.generate([_conversation()] * 3, n=2, temperature=1.0, top_p=0.95, max_new_tokens=4)
    assert again == out  # seeded: repeatable


def test_chat_template_and_lora_adapter(tiny_dirs, tmp_path):
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    from drk.eval.policies import HFPolicy

    adapter = tmp_path / "adapter"
    base = AutoModelForCausalLM.from_pretrained(tiny_dirs[0])
    get_peft_model(base, LoraConfig(r=2, target_modules=["q_proj", "v_proj"])).save_pretrained(adapter)
    policy = HFPolicy(str(tiny_dirs[0]), adapter=str(adapter), device="cpu")
    assert isinstance(policy.model, PeftModel)
    prompt = policy.render(_conversation())
    assert prompt.startswith("<|im_start|>system\n") and prompt.endswith("<|im_start|>assistant\n")
    out = policy.generate([_conversation()], n=1, temperature=0, max_new_tokens=3)
    assert len(out) == 1 and len(out[0]) == 1
    assert policy.describe()["adapter"] == str(adapter)
