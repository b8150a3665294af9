"""Cold start: supervised fine-tuning on multi-turn trajectories with TRL's ``SFTTrainer`` (``drk sft``).

Data: a JSONL file, one trajectory per line, ``{"messages": [...]}`` (or the same rows as Parquet, a ``datasets``
dataset or ``hf:OWNER/NAME``, see :func:`load_trajectories`) in the chat format of the RL trainer
(``drk.chat``): a system message with the instructions, the problem as the first user message, then
assistant replies alternating with feedback user messages (build one with ``PromptFormat.conversation``).
Only assistant tokens receive loss (``assistant_only_loss``): the problem and the feedback never do. A plain
causal LM without a chat template gets ``drk.chat.PLAIN_CHAT_TEMPLATE``, which renders the same transcript the
RL trainer's plain format generates from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from drk.device import DEVICES, DTYPES, resolve_device, resolve_dtype
from drk.train.config import TINY, check_choice, check_known_keys, load_config_file


@dataclass
class SFTRunConfig:
    """Supervised cold start (``drk sft --config FILE``). The paper: 8K five-turn trajectories (ours: small)."""

    model: str = TINY  # hub id or directory; "tiny" builds drk.models' tiny model under out_dir
    data: str = ""  # {"messages": [...]} trajectories: JSONL, Parquet, a save_to_disk folder or hf:OWNER/NAME[:SPLIT]
    out_dir: str = "runs/sft"
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_target_modules: str | list[str] = "all-linear"
    epochs: float = 1.0
    max_steps: int = -1  # > 0 overrides epochs
    learning_rate: float = 1e-5
    micro_batch_size: int = 1
    grad_accum_steps: int = 1
    max_length: int | None = 16384  # tokens per trajectory; longer ones are truncated
    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    seed: int = 0
    report_to: list[str] = field(default_factory=lambda: ["none"])
    logging_steps: int = 1

    def __post_init__(self) -> None:
        check_choice("device", self.device, DEVICES)
        check_choice("dtype", self.dtype, DTYPES)
        if not self.data:
            raise ValueError("data: give the trajectories ({\"messages\": [...]} rows: JSONL, Parquet, a dataset "
                             "folder or hf:OWNER/NAME)")
        if self.learning_rate <= 0 or self.micro_batch_size < 1 or self.grad_accum_steps < 1:
            raise ValueError("learning_rate must be > 0, micro_batch_size and grad_accum_steps >= 1")
        if isinstance(self.report_to, str):
            self.report_to = [self.report_to]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SFTRunConfig:
        """Build from a dict; unknown keys are an error listing the valid ones."""
        return cls(**check_known_keys(cls, data))

    @classmethod
    def from_file(cls, path: str | Path, overrides: dict[str, Any] | None = None) -> SFTRunConfig:
        return cls.from_dict({**load_config_file(path), **(overrides or {})})


def load_trajectories(data: Any) -> list[dict[str, Any]]:
    """Read and check the trajectories: each row a ``{"messages": [...]}`` with at least one assistant turn.

    Args:
        data: a JSONL file (one trajectory per line), a ``.parquet`` file, a ``datasets.Dataset``/``DatasetDict``
            or its ``save_to_disk`` folder, or ``"hf:OWNER/NAME[:SPLIT]"``: the sources ``load_problems``
            takes (:func:`drk.gym.datasets.dataset_rows`), since the authors' cold-start data is a dataset release.
            Columns other than ``messages`` are ignored.
    """
    from drk.gym.datasets import HF_PREFIX, dataset_rows

    if isinstance(data, (str, Path)) and not (
        str(data).startswith(HF_PREFIX) or Path(data).suffix.lower() == ".parquet" or Path(data).is_dir()
    ):
        return _checked_trajectories(_jsonl_rows(data), str(data))
    rows, source = dataset_rows(data)
    return _checked_trajectories(((f"{source}: row {i}", row) for i, row in enumerate(rows)), source)


def _jsonl_rows(path: str | Path) -> Iterator[tuple[str, Any]]:
    """(``path:line``, row) of a JSONL file of any suffix (the original ``drk sft`` data format)."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                yield f"{path}:{n}", json.loads(line)


def _checked_trajectories(labelled_rows: Iterable[tuple[str, Any]], source: str) -> list[dict[str, Any]]:
    """Keep ``role``/``content`` of each message; a row without an assistant message is an error naming it."""
    rows = []
    for where, row in labelled_rows:
        messages = row.get("messages") if isinstance(row, dict) else None
        if hasattr(messages, "tolist"):  # a pandas/numpy array of messages
            messages = messages.tolist()
        if not isinstance(messages, list) or not any(
            isinstance(m, dict) and m.get("role") == "assistant" for m in messages
        ):
            raise ValueError(f"{where}: need {{\"messages\": [...]}} with at least one assistant message")
        rows.append({"messages": [{"role": m["role"], "content": m["content"]} for m in messages]})
    if not rows:
        raise ValueError(f"{source}: no trajectories")
    return rows


def build_sft_trainer(cfg: SFTRunConfig):
    """A TRL ``SFTTrainer`` over ``cfg.data`` with assistant-only loss."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig, SFTTrainer

    from drk.chat import PLAIN_CHAT_TEMPLATE
    from drk.models import build_tiny_model, load_tokenizer

    model_id = cfg.model
    if model_id == TINY:
        model_id = str(build_tiny_model(Path(cfg.out_dir) / "tiny_model", seed=cfg.seed))
    tokenizer = load_tokenizer(model_id)
    tokenizer.padding_side = "right"
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = PLAIN_CHAT_TEMPLATE
    on_cuda = resolve_device(cfg.device) == "cuda"
    dtype = resolve_dtype(cfg.dtype, cfg.device)
    bf16 = dtype == "bfloat16"
    model = AutoModelForCausalLM.from_pretrained(model_id, dtype=getattr(torch, dtype))
    args = SFTConfig(
        output_dir=str(Path(cfg.out_dir) / "trainer"), num_train_epochs=cfg.epochs, max_steps=cfg.max_steps,
        learning_rate=cfg.learning_rate, per_device_train_batch_size=cfg.micro_batch_size,
        gradient_accumulation_steps=cfg.grad_accum_steps, max_length=cfg.max_length, assistant_only_loss=True,
        use_cpu=not on_cuda, bf16=bf16, seed=cfg.seed, report_to=cfg.report_to, logging_steps=cfg.logging_steps,
        save_strategy="no", packing=False,
    )
    peft_config = None
    if cfg.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, target_modules=cfg.lora_target_modules,
                                 task_type="CAUSAL_LM")
    return SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(load_trajectories(cfg.data)),
                      processing_class=tokenizer, peft_config=peft_config)


def sft(cfg: SFTRunConfig) -> Path:
    """Run the cold start; returns the checkpoint directory (model or adapter + tokenizer + drk_config.json)."""
    from drk.train.api import write_run_metadata
    from drk.train.logs import JsonlLogCallback

    out = Path(cfg.out_dir)
    trainer = build_sft_trainer(cfg)
    trainer.add_callback(JsonlLogCallback(out / "log.jsonl"))
    trainer.train()
    checkpoint = out / "checkpoint-final"
    trainer.save_model(str(checkpoint))
    trainer.processing_class.padding_side = "left"
    trainer.processing_class.save_pretrained(str(checkpoint))
    write_run_metadata(checkpoint / "drk_config.json", cfg)
    return checkpoint
