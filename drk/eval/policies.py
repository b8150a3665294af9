"""Policies: chat messages in, replies out, whatever generates them.

Every policy has one method, ``generate(messages_batch, *, n, temperature, top_p, max_new_tokens, meta=None)``:
for each conversation in the batch it returns ``n`` sampled assistant replies. ``meta`` (one
:class:`RequestMeta` per conversation) names the problem, turn and sample indices of the request; generating
policies ignore it, :class:`drk.eval.replay.ReplayPolicy` looks replies up by it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple, Protocol

Messages = list[dict[str, str]]


class RequestMeta(NamedTuple):
    """Who a conversation belongs to: problem key, turn (1-based) and the sample index of each requested reply."""

    problem: str
    turn: int
    samples: tuple[int, ...]


class Policy(Protocol):
    """Anything that answers chat conversations."""

    def generate(self, messages_batch: Sequence[Messages], *, n: int = 1, temperature: float = 1.0,
                 top_p: float = 0.95, max_new_tokens: int = 8192,
                 meta: Sequence[RequestMeta] | None = None) -> list[list[str]]: ...

    def describe(self) -> dict[str, Any]: ...


def render_plain(messages: Messages, bos: str = "") -> str:
    """A conversation as the plain-LM transcript of ``drk.chat.PromptFormat`` (``### Problem`` / ``### Answer`` /
    ``### Feedback``), so a plain model trained by ``drk.train`` is evaluated on the text it was trained on. Renders
    only: feedback turns holding candidates' text get their markup broken up before it
    (``PromptFormat.break_feedback_tokens``, as :meth:`HFPolicy.render` does).

    Args:
        messages: optional system message, the first user message, then alternating assistant / user turns.
        bos: the tokenizer's BOS text, if any.
    """
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else None
    rest = messages[1:] if system is not None else messages
    text = f"{bos}{system}\n\n" if system is not None else bos
    text += f"### Problem\n{rest[0]['content']}\n\n### Answer\n"
    for message in rest[1:]:
        text += message["content"] if message["role"] == "assistant" else (
            f"\n\n### Feedback\n{message['content']}\n\n### Answer\n")
    return text


class HFPolicy:
    """A local Hugging Face causal LM (a model id in the local cache, or a directory), optionally with LoRA.

    Args:
        model: model id or directory (no network: ``HF_HUB_OFFLINE`` is honoured by ``transformers``).
        adapter: optional PEFT adapter directory, applied on top of ``model``.
        device: ``"auto"`` (CUDA if available), ``"cpu"``, ``"cuda"``, ``"cuda:1"`` ...
        dtype: ``"auto"``, ``"bfloat16"``, ``"float32"`` ...
        batch_size: conversations generated together (left-padded).
        seed: seeds ``torch`` before each ``generate`` call, so a run is repeatable.
        chat_template_kwargs: extra ``apply_chat_template`` arguments, e.g. ``{"enable_thinking": False}``.
    """

    def __init__(self, model: str, *, adapter: str | None = None, device: str = "auto", dtype: str = "auto",
                 batch_size: int = 4, seed: int = 0, chat_template_kwargs: dict | None = None):
        import torch
        from transformers import AutoModelForCausalLM

        from drk.chat import PromptFormat
        from drk.device import resolve_device
        from drk.models import load_tokenizer

        self.model_name, self.adapter, self.batch_size, self.seed = str(model), adapter, batch_size, seed
        self.device = resolve_device(device)
        self.tokenizer = load_tokenizer(self.model_name)
        self.format = PromptFormat(self.tokenizer, chat_template_kwargs=chat_template_kwargs or {})
        torch_dtype = dtype if dtype == "auto" else getattr(torch, dtype)
        self.model = AutoModelForCausalLM.from_pretrained(self.model_name, dtype=torch_dtype).to(self.device)
        if adapter:
            from peft import PeftModel

            self.model = PeftModel.from_pretrained(self.model, adapter)
        self.model.eval()

    def render(self, messages: Messages) -> str:
        """The prompt text: the tokenizer's chat template when it has one, else :func:`render_plain` (feedback turns
        with the tokenizer's added tokens broken up: they hold the candidates' text)."""
        messages = self.format.break_feedback_tokens(messages)
        if self.format.is_chat:
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                                      **self.format.chat_template_kwargs)
        return render_plain(messages, bos=getattr(self.tokenizer, "bos_token", None) or "")

    def generate(self, messages_batch, *, n=1, temperature=1.0, top_p=0.95, max_new_tokens=8192, meta=None):
        import torch

        torch.manual_seed(self.seed)
        prompts = [self.render(m) for m in messages_batch]
        replies: list[list[str]] = []
        for start in range(0, len(prompts), self.batch_size):
            chunk = prompts[start:start + self.batch_size]
            enc = self.tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
            sampling = {"do_sample": True, "temperature": temperature, "top_p": top_p} if temperature > 0 else {
                "do_sample": False}
            with torch.no_grad():
                out = self.model.generate(**enc, max_new_tokens=max_new_tokens, num_return_sequences=n,
                                          pad_token_id=self.tokenizer.pad_token_id, **sampling)
            new_tokens = out[:, enc["input_ids"].shape[1]:]  # (len(chunk) * n, new)
            texts = self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
            replies += [texts[i * n:(i + 1) * n] for i in range(len(chunk))]
        return replies

    def describe(self) -> dict[str, Any]:
        return {"kind": "hf", "model": self.model_name, "adapter": self.adapter, "device": self.device,
                "seed": self.seed}


class EndpointError(RuntimeError):
    """The chat endpoint refused or failed a request after all retries."""


class OpenAIPolicy:
    """An OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, SGLang, OpenAI ...), over ``httpx``.

    Args:
        model: the served model name.
        base_url: endpoint root including ``/v1``.
        api_key_env: name of the environment variable holding the API key; unset means no auth header
            (local servers).
        timeout_s: per-request timeout.
        max_retries: retries on connection errors, 408/409/429 and 5xx, with exponential backoff.
        backoff_s: first backoff; doubles each retry.
        concurrency: conversations in flight at once.
    """

    RETRY_STATUSES = (408, 409, 429, 500, 502, 503, 504)

    def __init__(self, model: str, *, base_url: str = "http://localhost:8000/v1", api_key_env: str = "OPENAI_API_KEY",
                 timeout_s: float = 600.0, max_retries: int = 5, backoff_s: float = 1.0, concurrency: int = 8):
        if max_retries < 0 or backoff_s < 0 or concurrency < 1:
            raise ValueError("max_retries and backoff_s must be >= 0 and concurrency >= 1")
        self.model, self.base_url, self.api_key_env = model, base_url.rstrip("/"), api_key_env
        self.timeout_s, self.max_retries, self.backoff_s, self.concurrency = timeout_s, max_retries, backoff_s, concurrency

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env or "", "")
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _post(self, client, payload: dict[str, Any]) -> dict[str, Any]:
        import httpx

        url = f"{self.base_url}/chat/completions"
        for attempt in range(self.max_retries + 1):
            try:
                response = client.post(url, json=payload, headers=self._headers(), timeout=self.timeout_s)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    return response.json()
                problem = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code in (401, 403):
                    raise EndpointError(f"{url} refused the request ({problem}); set ${self.api_key_env} to a valid key")
                if response.status_code not in self.RETRY_STATUSES:
                    raise EndpointError(f"{url} rejected the request ({problem}); check model={self.model!r}")
            if attempt < self.max_retries:
                time.sleep(self.backoff_s * 2**attempt)
        raise EndpointError(f"{url} failed after {self.max_retries + 1} attempts; last error: {problem}")

    def _complete(self, client, messages: Messages, n: int, params: dict[str, Any]) -> list[str]:
        replies: list[str] = []
        while len(replies) < n:  # some servers cap or ignore `n`: ask again for the rest
            body = self._post(client, {"model": self.model, "messages": messages, "n": n - len(replies), **params})
            choices = body.get("choices") or []
            if not choices:
                raise EndpointError(f"{self.base_url} returned no choices: {str(body)[:300]}")
            replies += [(c.get("message") or {}).get("content") or "" for c in choices]
        return replies[:n]

    def generate(self, messages_batch, *, n=1, temperature=1.0, top_p=0.95, max_new_tokens=8192, meta=None):
        import httpx

        params = {"temperature": temperature, "top_p": top_p, "max_tokens": max_new_tokens}
        with httpx.Client() as client, ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(lambda m: self._complete(client, m, n, params), messages_batch))

    def describe(self) -> dict[str, Any]:
        return {"kind": "openai", "model": self.model, "base_url": self.base_url, "api_key_env": self.api_key_env}
