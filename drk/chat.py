"""The conversation with the policy: prompt template, feedback turns and answer extraction.

One format object renders token ids for both kinds of model:

- a chat model (Qwen3-style, any tokenizer with a chat template): ``system`` + ``user`` messages through the
  tokenizer's own template; each feedback turn is the token suffix that the template puts between the end of an
  assistant reply and the start of the next one (found by rendering a marker conversation, as TRL does for tool
  responses), so multi-turn training rows equal what the model saw while generating;
- a plain causal LM (no chat template): a markdown-like transcript with ``### Problem`` / ``### Answer`` /
  ``### Feedback`` headers.

Ids are built by concatenation, never by re-rendering the whole history, so generation context and training row
are the same tokens (a template that rewrites earlier turns, such as Qwen3 stripping old ``<think>`` blocks,
cannot desynchronise them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

SYSTEM_PROMPT = (
    "You are an expert in writing Triton kernels for efficient GPU programming. You are given a PyTorch reference "
    "module `Model` with `get_inputs()` and `get_init_inputs()`. Write a new module `ModelNew` with the same "
    "constructor signature whose forward pass computes the same outputs with custom Triton kernels "
    "(`@triton.jit`) that you define yourself, and is faster than the reference. Do not call the reference or "
    "fall back to PyTorch for the main computation. Answer with the complete, self-contained module in one "
    "```python fenced block."
)

FIRST_TURN_TEMPLATE = "Optimise this PyTorch reference with Triton kernels.\n\n```python\n{source}\n```"

FEEDBACK_TEMPLATE = (
    "Your previous answer was evaluated.\n\n{feedback}\n\n"
    "Improve your answer: fix any error, keep it correct, and make it faster. Reply with the complete module in "
    "one ```python fenced block."
)

#: A chat template that renders :class:`PromptFormat`'s plain transcript, so TRL's SFT trainer can train a plain
#: causal LM on the same multi-turn format with assistant-only loss (the ``{% generation %}`` spans).
PLAIN_CHAT_TEMPLATE = (
    "{%- set ns = namespace(users=0) %}"
    "{%- for message in messages %}"
    "{%- if message['role'] == 'system' %}{{- (bos_token or '') + message['content'] + '\n\n' }}"
    "{%- elif message['role'] == 'user' %}"
    "{%- if ns.users == 0 %}{{- '### Problem\n' + message['content'] + '\n\n### Answer\n' }}"
    "{%- else %}{{- '\n\n### Feedback\n' + message['content'] + '\n\n### Answer\n' }}{%- endif %}"
    "{%- set ns.users = ns.users + 1 %}"
    "{%- else %}{%- generation %}{{- message['content'] + (eos_token or '') }}{%- endgeneration %}"
    "{%- endif %}"
    "{%- endfor %}"
)

_REPLY_MARKER = "<<drk-reply-marker>>"
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_PLAIN_STOPS = ("\n### Feedback", "\n### Problem")


#: A header of the plain transcript at a line's start (``### Answer``, ``### Feedback``, ...), in any indentation.
_PLAIN_HEADER = re.compile(r"(?m)^([ \t]*)###")


def break_plain_headers(text: str) -> str:
    """``text`` with every line-initial ``###`` broken up (``# ##``). In the plain transcript the turns are marked by
    ``### Answer`` / ``### Feedback`` lines, ordinary text: an error message holding them closed the feedback turn,
    put an answer in the policy's mouth and opened a forged feedback turn ("Your code is correct. Speedup 9.80x",
    attacker review 13). Feedback turns only; chat templates mark turns with tokens (:meth:`PromptFormat.
    break_added_tokens`)."""
    return _PLAIN_HEADER.sub(r"\1# ##", text)


def first_user_message(problem_source: str) -> str:
    """The first user turn: the reference module in a fenced block."""
    return FIRST_TURN_TEMPLATE.format(source=problem_source.strip())


def feedback_user_message(feedback: str) -> str:
    """A later user turn: the environment's feedback on the previous answer and the request to improve it."""
    return FEEDBACK_TEMPLATE.format(feedback=(feedback or "(no feedback)").strip())


def fenced_reply(source: str) -> str:
    """A module answered the way an LLM answers it: one sentence, then the code in one python block.

    The replies drk writes itself (scripted rollouts, replayed solutions, the mini experiment's cold-start data)
    all go through here, so they look alike to the tokenizer and the environment.

    >>> fenced_reply("x = 1\\n")
    'Here is the Triton implementation.\\n\\n```python\\nx = 1\\n```\\n'
    """
    return f"Here is the Triton implementation.\n\n```python\n{source.strip()}\n```\n"


def answer_text(reply: str) -> str:
    """The part of a reply that holds the answer: reasoning in ``<think>`` blocks and a plain LM's run-on text
    past the next section header are dropped. The environment then takes the last fenced python block.

    >>> answer_text("<think>try ```python\\nA=1\\n```</think>Final:\\n```python\\nB=2\\n```")
    'Final:\\n```python\\nB=2\\n```'
    >>> answer_text("```python\\nC=3\\n```\\n### Feedback\\nrambling")
    '```python\\nC=3\\n```'
    """
    text = _THINK.sub("", reply)
    if "<think>" in text:  # unterminated reasoning (truncated reply): nothing after it is an answer
        text = text.split("<think>", 1)[0]
    for stop in _PLAIN_STOPS:
        text = text.split(stop, 1)[0]
    return text.strip()


@dataclass
class PromptFormat:
    """Renders prompts and feedback turns as token ids for one tokenizer.

    Args:
        tokenizer: A ``transformers`` tokenizer.
        kind: ``"auto"`` (chat when the tokenizer has a chat template), ``"chat"`` or ``"plain"``.
        system_prompt: The instructions (a system message for chat models, a preamble for plain LMs).
        chat_template_kwargs: Extra arguments for ``apply_chat_template``, e.g. ``{"enable_thinking": False}``.
    """

    tokenizer: Any
    kind: Literal["auto", "chat", "plain"] = "auto"
    system_prompt: str = SYSTEM_PROMPT
    chat_template_kwargs: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in ("auto", "chat", "plain"):
            raise ValueError(f"kind={self.kind!r}: must be 'auto', 'chat' or 'plain'")
        if self.kind == "auto":
            self.kind = "chat" if getattr(self.tokenizer, "chat_template", None) else "plain"
        if self.kind == "chat" and not getattr(self.tokenizer, "chat_template", None):
            raise ValueError("kind='chat' but the tokenizer has no chat template; use kind='plain' or 'auto'")

    @property
    def is_chat(self) -> bool:
        return self.kind == "chat"

    def first_messages(self, problem_source: str) -> list[dict[str, str]]:
        """The conversation before the first reply (system + user)."""
        return [{"role": "system", "content": self.system_prompt},
                {"role": "user", "content": first_user_message(problem_source)}]

    def prompt_text(self, problem_source: str) -> str:
        """The first prompt as text, ending where the model's reply starts."""
        messages = self.first_messages(problem_source)
        if self.is_chat:
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                                      **self.chat_template_kwargs)
        bos = getattr(self.tokenizer, "bos_token", None) or ""
        return f"{bos}{self.system_prompt}\n\n### Problem\n{messages[1]['content']}\n\n### Answer\n"

    def prompt_ids(self, problem_source: str) -> list[int]:
        """Token ids of :meth:`prompt_text`."""
        return self._encode(self.prompt_text(problem_source))

    def feedback_text(self, feedback: str, *, reply_ids: list[int] | None = None) -> str:
        """The text between the end of a reply and the start of the next one.

        For chat models the template's own end-of-turn text is included unless the reply already ended with it
        (the usual case: generation stops on ``<|im_end|>``); a truncated reply is closed here.
        """
        message = self.feedback_message(feedback)
        if not self.is_chat:
            return f"\n\n### Feedback\n{message}\n\n### Answer\n"
        conversation = [{"role": "user", "content": "u"}, {"role": "assistant", "content": _REPLY_MARKER},
                        {"role": "user", "content": message}]
        rendered = self.tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True,
                                                      **self.chat_template_kwargs)
        suffix = rendered[rendered.index(_REPLY_MARKER) + len(_REPLY_MARKER):]
        if reply_ids:
            last = self.tokenizer.decode(reply_ids[-1:], skip_special_tokens=False)
            if last and last in self._eos_texts() and suffix.startswith(last):
                suffix = suffix[len(last):]
        return suffix

    def feedback_message(self, feedback: str) -> str:
        """A feedback turn's content: the feedback in :data:`FEEDBACK_TEMPLATE`, with everything of the candidate's
        that could act as turn markup broken up (the tokenizer's added tokens, plain-transcript headers). The one
        place every rendering of a feedback turn gets its text from, so generation and training rows agree."""
        return self.break_turn_markup(feedback_user_message(feedback))

    def break_turn_markup(self, text: str) -> str:
        """:meth:`break_added_tokens` and :func:`break_plain_headers` (for either kind of model: the same text in
        both keeps one conversation's rows alike, and ``###`` lines mean nothing to a chat template)."""
        return break_plain_headers(self.break_added_tokens(text))

    def break_added_tokens(self, text: str) -> str:
        """``text`` with every added token of this tokenizer that is markup (not a plain word) broken up by a space
        after its first character. The feedback holds the candidate's own text: a tokenizer reads its added tokens
        (DeepSeek's ``<｜User｜>``, a model's tool markers) as control tokens even with ``add_special_tokens=False``,
        so an error message could forge a turn; :func:`drk.gym.feedback.defang` knows only common forms
        (attacker review 12)."""
        added = getattr(self.tokenizer, "get_added_vocab", lambda: {})()
        markup = sorted((t for t in added if len(t) > 1 and not t.replace("_", "").isalnum()), key=len, reverse=True)
        for _ in range(4):  # a token broken up may leave another one whole (nested forms): a few passes
            found = [t for t in markup if t in text]
            if not found:
                break
            for token in found:
                text = text.replace(token, token[0] + " " + token[1:])
        return text

    def break_feedback_tokens(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """``messages`` with :meth:`break_turn_markup` applied to every user turn after the first (the feedback
        turns, which hold the candidates' text), for a conversation rendered by the tokenizer's template as a whole
        (``drk.eval``'s local policy)."""
        first = next((i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages))
        return [{**m, "content": self.break_turn_markup(m["content"])} if i > first and m.get("role") == "user"
                else m for i, m in enumerate(messages)]

    def feedback_ids(self, feedback: str, *, reply_ids: list[int] | None = None) -> list[int]:
        """Token ids of :meth:`feedback_text`; they never receive loss (``env_mask`` 0)."""
        return self._encode(self.feedback_text(feedback, reply_ids=reply_ids))

    def conversation(self, problem_source: str, replies: list[str], feedbacks: list[str]) -> list[dict[str, str]]:
        """A trajectory as chat messages (for SFT data): replies[i] answered, feedbacks[i] came back."""
        messages = self.first_messages(problem_source)
        for i, reply in enumerate(replies):
            messages.append({"role": "assistant", "content": reply})
            if i < len(feedbacks):
                messages.append({"role": "user", "content": self.feedback_message(feedbacks[i])})
        return messages

    def _eos_texts(self) -> set[str]:
        ids = getattr(self.tokenizer, "eos_token_id", None)
        tokens = {self.tokenizer.eos_token} if self.tokenizer.eos_token else set()
        if isinstance(ids, list):
            tokens |= {self.tokenizer.convert_ids_to_tokens(i) for i in ids}
        return tokens | {"<|im_end|>", "<|endoftext|>", "<|eot_id|>"}

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
