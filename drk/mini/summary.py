"""One table of the mini experiment: per run, what the RL steps did and what the final policy does on held-out."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

#: Metrics summarised per run: the first logged step, and the mean of the last ``tail`` steps.
SUMMARY_METRICS: tuple[str, ...] = ("gym/correct_rate/turn1", "gym/fast@1/turn1", "gym/fast@1.2/turn1",
                                    "gym/hacking_ratio", "gym/compile_error_rate", "rl/reward_mean")


def load_mini_logs(results_dir: str | Path) -> pd.DataFrame:
    """Every ``train/<variant>/seed<k>/log.jsonl`` as wide rows with ``variant`` and ``seed`` (RL steps only)."""
    frames = []
    for path in sorted(Path(results_dir).glob("train/*/seed*/log.jsonl")):
        rows = pd.read_json(path, lines=True)
        rows = rows[rows.get("rl/reward_mean", pd.Series(index=rows.index, dtype=float)).notna()]
        frames.append(rows.assign(variant=path.parent.parent.name, seed=int(path.parent.name[4:])))
    if not frames:
        raise FileNotFoundError(f"no train/<variant>/seed<k>/log.jsonl under {results_dir}")
    return pd.concat(frames, ignore_index=True)


def summarize(results_dir: str | Path, tail: int = 3) -> pd.DataFrame:
    """Per (variant, seed): steps, each metric at step 1 and over the last ``tail`` steps, held-out correct rate.

    Rates are fractions. ``heldout_correct`` is the share of held-out (problem, sample, turn) records that are
    correct (``heldout/<variant>_seed<k>.jsonl``), NaN when that file is absent.
    """
    logs = load_mini_logs(results_dir)
    rows = []
    for (variant, seed), run in logs.groupby(["variant", "seed"], sort=False):
        run = run.sort_values("step")
        row = {"variant": variant, "seed": seed, "steps": len(run)}
        for metric in SUMMARY_METRICS:
            values = run[metric] if metric in run else pd.Series(dtype=float)
            row[f"{metric}@first"] = values.iloc[0] if len(values) else float("nan")
            row[f"{metric}@last{tail}"] = values.tail(tail).mean() if len(values) else float("nan")
        heldout = Path(results_dir) / "heldout" / f"{variant}_seed{seed}.jsonl"
        row["heldout_correct"] = (pd.read_json(heldout, lines=True)["correct"].mean() if heldout.is_file()
                                  else float("nan"))
        rows.append(row)
    return pd.DataFrame(rows)
