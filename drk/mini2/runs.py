"""The output tree of a seeds x variants grid (:mod:`drk.mini2.experiment`), and its tidy tables for figures and
claims (issue 12, items 6-8)::

    <root>/<setting>/sft/seed<k>/               checkpoint/, demos.jsonl, sft_log.jsonl, done.json
    <root>/<setting>/<variant>/seed<k>/         config.json, log.jsonl, heldout.jsonl, final/, done.json
    <root>/<setting>/trloo/seed<k>/stts/        stts.jsonl, stts_<context>_records.jsonl, done.json

``done.json`` is written last, so a folder without it is a run that did not finish: the driver redoes it, and the
readers here skip it. Settings are those of :data:`drk.mini2.config.SETTINGS` (``main``, ``sensitivity``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from drk.jsonl import read_jsonl

DONE = "done.json"
_SEED_DIR = re.compile(r"^seed(\d+)$")


def sft_dir(root: str | Path, setting: str, seed: int) -> Path:
    return Path(root) / setting / "sft" / f"seed{seed}"


def rl_dir(root: str | Path, setting: str, variant: str, seed: int) -> Path:
    return Path(root) / setting / variant / f"seed{seed}"


def stts_dir(root: str | Path, setting: str, seed: int) -> Path:
    """STTS lives inside the trloo run it evaluates: redoing that run removes it too."""
    return rl_dir(root, setting, "trloo", seed) / "stts"


def is_done(path: str | Path) -> bool:
    return (Path(path) / DONE).is_file()


@dataclass(frozen=True)
class RunRef:
    """One finished RL run of the tree."""

    setting: str
    variant: str
    seed: int
    path: Path


def finished_runs(root: str | Path, setting: str | None = None) -> list[RunRef]:
    """Every finished RL run under ``root`` (of ``setting`` only, when given), sorted."""
    out = []
    for setting_path in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        if setting is not None and setting_path.name != setting:
            continue
        for variant_path in sorted(p for p in setting_path.iterdir() if p.is_dir() and p.name != "sft"):
            for seed_path in sorted(variant_path.iterdir()):
                match = _SEED_DIR.match(seed_path.name)
                if match and is_done(seed_path):
                    out.append(RunRef(setting_path.name, variant_path.name, int(match.group(1)), seed_path))
    return sorted(out, key=lambda r: (r.setting, r.variant, r.seed))


def settings_in(root: str | Path) -> list[str]:
    """The settings that have at least one finished run."""
    return sorted({r.setting for r in finished_runs(root)})


#: The training-log metrics the figures draw (:mod:`drk.figures.mini2`); an export keeps these and every held-out one.
FIGURE_TRAINING_METRICS: tuple[str, ...] = ("rl/reward_mean", "mini2/hack_evidence_rate", "rl/mrs_masked_frac",
                                            "grad_norm")


def curves_path(root: str | Path, setting: str) -> Path:
    return Path(root) / f"curves_{setting}.csv.gz"


def stts_path(root: str | Path, setting: str) -> Path:
    return Path(root) / f"stts_{setting}.csv"


def export_curves(root: str | Path, out_dir: str | Path) -> list[Path]:
    """What the figures read from a grid's tree, per setting, as small files that can be committed (the tree is
    ~60 MB of logs and checkpoints): ``curves_<setting>.csv.gz`` (:func:`load_training`'s table, the
    :data:`FIGURE_TRAINING_METRICS` and every held-out metric) and ``stts_<setting>.csv`` (:func:`load_stts`'s).
    :func:`load_training` and :func:`load_stts` read such a folder in place of the tree."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for setting in settings_in(root):
        log = load_training(root, setting)
        keep = log["metric"].isin(FIGURE_TRAINING_METRICS) | log["metric"].str.startswith("heldout/")
        log[keep].to_csv(curves_path(out_dir, setting), index=False, float_format="%.6g")
        load_stts(root, setting).to_csv(stts_path(out_dir, setting), index=False, float_format="%.6g")
        written += [curves_path(out_dir, setting), stts_path(out_dir, setting)]
    if not written:
        raise ValueError(f"no finished run under {root} (a grid's root: <root>/<setting>/<variant>/seed<k>)")
    return written


def load_training(root: str | Path, setting: str = "main") -> pd.DataFrame:
    """The finished runs of one setting as one tidy table: ``variant, seed, step, metric, value``.

    Training metrics are ``log.jsonl``'s (one row per step: ``rl/reward_mean``, ``grad_norm``,
    ``mini2/hack_evidence_rate``, ...); held-out points are ``heldout/<metric>`` (``heldout/fast@1.2/turn3``, ...)
    at their steps (0 = the SFT policy). Non-numeric and missing values are dropped. ``root`` is a grid's tree, or
    a folder written by :func:`export_curves` (then only the metrics it kept).
    """
    if curves_path(root, setting).is_file():
        return pd.read_csv(curves_path(root, setting))
    frames = []
    for run in finished_runs(root, setting):
        wide = pd.DataFrame(read_jsonl(run.path / "log.jsonl"))
        long = wide.melt(id_vars=["step"], var_name="metric", value_name="value")
        points = read_jsonl(run.path / "heldout.jsonl") if (run.path / "heldout.jsonl").is_file() else []
        held = pd.DataFrame([{"step": p["step"], "metric": f"heldout/{m}", "value": v}
                             for p in points for m, v in p["metrics"].items()])
        frames.append(pd.concat([long, held], ignore_index=True).assign(variant=run.variant, seed=run.seed))
    if not frames:
        return pd.DataFrame(columns=["variant", "seed", "step", "metric", "value"])
    out = pd.concat(frames, ignore_index=True)
    out["value"] = pd.to_numeric(out["value"], errors="coerce")
    return out.dropna(subset=["value"])[["variant", "seed", "step", "metric", "value"]].reset_index(drop=True)


def load_stts(root: str | Path, setting: str = "main") -> pd.DataFrame:
    """The finished STTS evaluations of one setting: ``seed, context, turn, mode, p, value``.

    ``mode`` is ``last`` (the answer at turn t) or ``best`` (best of turns <= t); ``p`` the Fast@p threshold.
    ``root`` is a grid's tree or a folder written by :func:`export_curves`.
    """
    if stts_path(root, setting).is_file():
        return pd.read_csv(stts_path(root, setting))
    rows = []
    for path in sorted((Path(root) / setting / "trloo").glob("seed*/stts")):
        if not is_done(path):
            continue
        seed = int(_SEED_DIR.match(path.parent.name).group(1))
        for point in read_jsonl(path / "stts.jsonl"):
            for metric, value in point["metrics"].items():
                match = re.match(r"^fast@([\d.]+)/(best_)?turn(\d+)$", metric)
                if match and value is not None:
                    rows.append({"seed": seed, "context": point["context"], "turn": int(match.group(3)),
                                 "mode": "best" if match.group(2) else "last", "p": float(match.group(1)),
                                 "value": float(value)})
    return pd.DataFrame(rows, columns=["seed", "context", "turn", "mode", "p", "value"])
