"""The mini2 policy: a tiny causal LM over the language's own tokens, with a word-level vocabulary (issue 12, item 5).

The vocabulary is fixed and small (about 100 tokens): specials, the task tokens of :func:`drk.mini2.task_tokens`,
the 13 program tokens and the feedback tokens. A word-level vocabulary (one token per language word) keeps the
model tiny and makes every generated token a decision of the kernel-design language; no hub, no BPE training.

The model is a ``transformers`` Llama built from a config (``LlamaConfig``, fp32, about 100k-1M parameters), so it
is the same kind of object ``drk.train`` trains; :class:`Policy` adds what the lean RL loop needs:

- :meth:`Policy.generate`: sample one reply per context (temperature, or greedy), stopping at ``<end>``, and
  return the sampler's per-token log-probs of the *temperature-scaled* distribution, as TRL's trainer scores
  them. Its signature is :data:`drk.train.rollout.GenerateFn`, so :func:`drk.train.rollout.run_episodes` (the
  trainer's episode code) drives it.
- :meth:`Policy.completion_logps`: the per-token log-probs of padded completions, laid out as TRL lays out a
  batch (prompts left-padded, completions right-padded), shape (B, C).
- :meth:`Policy.sampling_copy`: a frozen copy in bf16 (or of stale weights) that rolls out while the fp32 model
  trains: the real rollout/trainer mismatch that MRS (Eq. 6) is for.

Positions are counted from each row's first real token (``cumsum(attention_mask) - 1``), in generation and in
scoring alike, so left padding changes nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drk.mini2.feedback import FEEDBACK_TOKENS
from drk.mini2.language import PROGRAM_TOKENS
from drk.mini2.tasks import ALL_OPS

PAD, BOS, END = "<pad>", "<bos>", "<end>"
SPECIALS: tuple[str, ...] = (PAD, BOS, END)
#: Every token of :func:`drk.mini2.task_tokens`: a leading matmul, the op names, the row-width bucket.
TASK_TOKENS: tuple[str, ...] = ("MM", *(f"OP_{op}" for op in ALL_OPS), "DIM_S", "DIM_M", "DIM_L")
VOCAB: tuple[str, ...] = SPECIALS + TASK_TOKENS + PROGRAM_TOKENS + FEEDBACK_TOKENS


class Mini2Tokenizer:
    """Token strings <-> ids over :data:`VOCAB`; the small subset of a ``transformers`` tokenizer's interface that
    :mod:`drk.train.rollout` uses (``eos_token_id``, ``pad_token_id``, ``decode``) plus ``encode``.

    Text is space-separated token strings: ``decode([id("FUSE"), id("BL"), id("W4"), id("<end>")],
    skip_special_tokens=True) == "FUSE BL W4"``.
    """

    def __init__(self, vocab: Sequence[str] = VOCAB) -> None:
        if len(set(vocab)) != len(vocab):
            raise ValueError("the vocabulary repeats a token")
        self.vocab: tuple[str, ...] = tuple(vocab)
        self._ids = {tok: i for i, tok in enumerate(self.vocab)}
        self.pad_token_id, self.bos_token_id, self.eos_token_id = (self._ids[t] for t in SPECIALS)
        self.eos_token, self.pad_token = END, PAD
        self.special_ids = frozenset(self._ids[t] for t in SPECIALS)

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, tokens: str | Sequence[str]) -> list[int]:
        """Ids of ``tokens`` (a space-separated string or a sequence).

        Raises:
            KeyError: a token outside the vocabulary (the environment's token sets are all in it).
        """
        words = tokens.split() if isinstance(tokens, str) else list(tokens)
        try:
            return [self._ids[w] for w in words]
        except KeyError as exc:
            raise KeyError(f"token {exc.args[0]!r} is not in the mini2 vocabulary") from None

    def convert_tokens_to_ids(self, token: str) -> int:
        return self._ids[token]

    def tokens(self, ids: Sequence[int], skip_special_tokens: bool = False) -> list[str]:
        return [self.vocab[i] for i in ids if not (skip_special_tokens and i in self.special_ids)]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return " ".join(self.tokens(ids, skip_special_tokens))


@dataclass(frozen=True)
class PolicyShape:
    """The model's size. The default (hidden 64, 2 layers, 4 heads) has ~100k parameters: big enough to map 13
    tasks to their best programs and read feedback, small enough that an RL step takes a fraction of a second."""

    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    max_positions: int = 128

    def __post_init__(self) -> None:
        if min(self.hidden_size, self.num_layers, self.num_heads, self.max_positions) < 1:
            raise ValueError(f"{self}: every size must be >= 1")
        if self.hidden_size % self.num_heads or (self.hidden_size // self.num_heads) % 2:
            raise ValueError(f"hidden_size={self.hidden_size} must split into num_heads={self.num_heads} heads "
                             "of even size (rotary embeddings)")


def build_model(shape: PolicyShape, tokenizer: Mini2Tokenizer, seed: int = 0):
    """A fresh ``LlamaForCausalLM`` (fp32, eager attention: exact and fastest at this size), seeded."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=shape.hidden_size, intermediate_size=2 * shape.hidden_size,
        num_hidden_layers=shape.num_layers, num_attention_heads=shape.num_heads,
        num_key_value_heads=shape.num_heads, max_position_embeddings=shape.max_positions,
        tie_word_embeddings=False, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, attn_implementation="eager",
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).float()


def _positions(attention_mask: torch.Tensor) -> torch.Tensor:
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


class Policy:
    """A causal LM and its tokenizer, with sampling and scoring as the lean RL loop needs them.

    Args:
        model: a ``transformers`` causal LM over ``tokenizer``'s vocabulary.
        tokenizer: the :class:`Mini2Tokenizer`.
        temperature: sampling temperature; the scored log-probs use the same scaling (as TRL's trainer does).
        max_reply_tokens: tokens per reply, ``<end>`` included (a program has at most 4 tokens).
        greedy: take the most likely token instead of sampling (evaluation).
    """

    def __init__(self, model, tokenizer: Mini2Tokenizer, *, temperature: float = 1.0, max_reply_tokens: int = 5,
                 greedy: bool = False, generator: torch.Generator | None = None) -> None:
        if temperature <= 0 or max_reply_tokens < 1:
            raise ValueError("temperature must be > 0 and max_reply_tokens >= 1")
        self.model, self.tokenizer = model, tokenizer
        self.temperature, self.max_reply_tokens, self.greedy = temperature, max_reply_tokens, greedy
        self.generator = generator or torch.Generator().manual_seed(0)

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def seed(self, *seeds: int) -> None:
        """Reseed sampling from integers (e.g. ``(run seed, step)``): every rollout is reproducible on its own."""
        self.generator.manual_seed(int(hash(tuple(int(s) for s in seeds)) % (2**63 - 1)))

    # ------------------------------------------------------------------ sampling
    @torch.no_grad()
    def generate(self, contexts: list[list[int]]) -> tuple[list[list[int]], list[list[float]]]:
        """One reply per context (a :data:`drk.train.rollout.GenerateFn`): ids up to and including ``<end>``
        (or ``max_reply_tokens`` ids), and the sampler's log-prob of each."""
        if not contexts:
            return [], []
        self.model.eval()
        width = max(len(c) for c in contexts)
        pad, eos = self.tokenizer.pad_token_id, self.tokenizer.eos_token_id
        ids = torch.full((len(contexts), width), pad, dtype=torch.long)
        attn = torch.zeros((len(contexts), width), dtype=torch.long)
        for i, c in enumerate(contexts):
            ids[i, width - len(c):] = torch.tensor(c, dtype=torch.long)
            attn[i, width - len(c):] = 1
        done = torch.zeros(len(contexts), dtype=torch.bool)
        out_ids: list[list[int]] = [[] for _ in contexts]
        out_lp: list[list[float]] = [[] for _ in contexts]
        for _ in range(self.max_reply_tokens):
            before = done.clone()
            logits = self.model(input_ids=ids, attention_mask=attn, position_ids=_positions(attn)).logits[:, -1]
            logp = torch.log_softmax(logits.float() / self.temperature, dim=-1)
            if self.greedy:
                tok = logp.argmax(-1)
            else:
                tok = torch.multinomial(logp.exp(), 1, generator=self.generator).squeeze(1)
            chosen = logp.gather(1, tok[:, None]).squeeze(1)
            for i in torch.nonzero(~before).flatten().tolist():
                out_ids[i].append(int(tok[i]))
                out_lp[i].append(float(chosen[i]))
            done = before | (tok == eos)
            ids = torch.cat([ids, torch.where(before, pad, tok)[:, None]], dim=1)  # finished rows: padding
            attn = torch.cat([attn, (~before).long()[:, None]], dim=1)
            if bool(done.all()):
                break
        return out_ids, out_lp

    # ------------------------------------------------------------------ scoring
    def completion_logps(self, prompts: list[list[int]], completions: list[list[int]], *,
                         grad: bool = False) -> torch.Tensor:
        """Per-token log-probs (B, C) of each completion given its prompt, C = the longest completion; 0 on padding.

        The batch layout is TRL's (``prompt_ids`` left-padded, ``completion_ids`` right-padded, one forward); with
        ``grad`` the graph is kept for the loss.
        """
        pad = self.tokenizer.pad_token_id
        p_w, c_w = max(len(p) for p in prompts), max(max(len(c) for c in completions), 1)
        ids = torch.full((len(prompts), p_w + c_w), pad, dtype=torch.long)
        attn = torch.zeros_like(ids)
        for i, (p, c) in enumerate(zip(prompts, completions, strict=True)):
            ids[i, p_w - len(p):p_w] = torch.tensor(p, dtype=torch.long)
            attn[i, p_w - len(p):p_w] = 1
            ids[i, p_w:p_w + len(c)] = torch.tensor(c, dtype=torch.long)
            attn[i, p_w:p_w + len(c)] = 1
        with torch.set_grad_enabled(grad):
            logits = self.model(input_ids=ids, attention_mask=attn, position_ids=_positions(attn)).logits
            logits = logits[:, p_w - 1:-1].float() / self.temperature  # position k predicts token k + 1
            logp = torch.log_softmax(logits, dim=-1).gather(2, ids[:, p_w:, None]).squeeze(2)
        return logp * attn[:, p_w:]

    # ------------------------------------------------------------------ copies
    def sampling_copy(self, dtype: torch.dtype = torch.float32) -> Policy:
        """A frozen copy of the current weights in ``dtype`` that samples with this policy's settings and
        generator: the rollout engine of a run whose rollouts and training differ (bf16 vs fp32, or stale)."""
        model = copy.deepcopy(self.model).to(dtype)
        for p in model.parameters():
            p.requires_grad_(False)
        return Policy(model, self.tokenizer, temperature=self.temperature, max_reply_tokens=self.max_reply_tokens,
                      greedy=self.greedy, generator=self.generator)

    def save(self, path) -> None:
        """Weights and config (``save_pretrained``); the vocabulary is :data:`VOCAB`, fixed by the code."""
        self.model.save_pretrained(str(path))

    @classmethod
    def load(cls, path, **kwargs) -> Policy:
        from transformers import LlamaForCausalLM

        model = LlamaForCausalLM.from_pretrained(str(path), attn_implementation="eager").float()
        tokenizer = Mini2Tokenizer()
        if model.config.vocab_size != len(tokenizer):
            raise ValueError(f"{path}: vocab_size {model.config.vocab_size} != this code's {len(tokenizer)}")
        return cls(model, tokenizer, **kwargs)


def new_policy(shape: PolicyShape | None = None, seed: int = 0, **kwargs) -> Policy:
    """A freshly initialised policy over :data:`VOCAB`."""
    tokenizer = Mini2Tokenizer()
    return Policy(build_model(shape or PolicyShape(), tokenizer, seed), tokenizer,
                  generator=torch.Generator().manual_seed(seed), **kwargs)

