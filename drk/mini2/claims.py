"""The claims table of ``results/mini2/PLAN.md`` from a grid's output tree (issue 12, item 7).

Per claim (variant A against B, one metric) and setting: the per-seed differences ``d_s = m_A,s - m_B,s`` over the
seeds both have, their mean (``effect``) and 95 % Student-t interval (n - 1 degrees of freedom), and the verdict by
the plan's rules (:func:`verdict`). Beside it, not used for the verdict, the 95 % problem-clustered bootstrap of the
effect (``boot_lo``, ``boot_hi``: held-out problems resampled with replacement, 2,000 times, the same draw for every
run and seed of the claim).

Verdict rules (PLAN.md, "Tests"), with ``margin`` the equivalence margin of the metric (2 percentage points for
Fast@p and the hacking ratio, 0.05 for PR):

- ``reproduced``: the interval excludes 0 on the side the paper claims (``>`` and ``>=`` alike: above 0; ``<``:
  below 0);
- ``not_reproduced``: it excludes 0 on the other side, or lies entirely within ``[-margin, +margin]``;
- ``inconclusive``: anything else, and every claim with fewer than two paired seeds.

The rules are applied in that order, so an interval that excludes 0 on the claimed side *and* lies within the
margin is ``reproduced`` (the plan lists that rule first). For the one equivalence claim (``~``: MRS is inert
without a mismatch) the paper's side is "no difference": ``reproduced`` when the interval lies within the margin,
``not_reproduced`` when it excludes 0, else ``inconclusive``.

Settings: a ``reproduced`` claim whose effect has the other sign in the other setting is reported as
``setting_dependent`` (``reported_verdict``); a main-setting ``reproduced`` claim whose sensitivity result is not
(yet) there is reported as ``sensitivity_pending``, and a row with fewer paired seeds than the plan's (amendment 2:
:data:`PLANNED_SEEDS`) as ``incomplete`` — the plan uses every seed of a setting, so a missing run is never
silently dropped. The control (``single_turn`` vs ``single_turn_grpo``) passes when it
is not ``reproduced`` and its interval lies within the margin; when it comes out ``reproduced`` every row of that
setting carries a warning.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from drk.mini2.endpoints import (
    STTS_TURNS,
    Observation,
    primary,
    run_config,
    run_observations,
    stts_metric,
    stts_observations,
)
from drk.mini2.runs import finished_runs, is_done, stts_dir
from drk.mini2.stats import bootstrap_weights, paired_interval, percentile_interval, t_interval

DIRECTIONS: tuple[str, ...] = (">", ">=", "<", "~")
COLUMNS: tuple[str, ...] = ("claim", "metric", "variant_a", "variant_b", "n_seeds", "effect", "ci_lo", "ci_hi",
                            "verdict")
EXTRA_COLUMNS: tuple[str, ...] = ("setting", "direction", "margin", "mean_a", "mean_b", "boot_lo", "boot_hi",
                                  "agrees_in_sensitivity", "reported_verdict", "control", "note")
#: PLAN.md amendment 2: seeds per setting (0-9 main, 0-4 sensitivity); every claim uses all of them.
PLANNED_SEEDS: dict[str, int] = {"main": 10, "sensitivity": 5}
#: The STTS pseudo-variants: the trloo checkpoints evaluated with each context (``stts/<context>``).
STTS_A, STTS_B = "stts/best_w", "stts/vanilla"


@dataclass(frozen=True)
class Claim:
    """One row of PLAN.md's claims table. ``metric`` may hold ``{T}`` (the training turns) and ``{S}`` (the STTS
    turns), filled from the runs' configs."""

    name: str
    variant_a: str
    variant_b: str
    direction: str
    metric: str = "fast@1.2/turn{T}"
    control: bool = False

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction={self.direction!r}: one of {DIRECTIONS}")


#: PLAN.md's claims, in its order, then the control.
CLAIMS: tuple[Claim, ...] = (
    Claim("TRLOO beats GRPO (self-inclusion bias)", "trloo", "grpo", ">"),
    Claim("the per-group shrinkage (1 - 1/N) of Eq. 4", "grpo_rescaled", "grpo", ">"),
    Claim("a lone success is not penalised (groups of size 1)", "trloo", "grpo_rescaled", ">="),
    Claim("multi-turn beats single-turn at equal samples", "trloo", "single_turn", ">"),
    Claim("gamma = 1 beats gamma = 0", "trloo", "gamma0", ">"),
    Claim("the hacking check prevents collapse", "trloo", "no_hack_check", ">"),
    Claim("the hacking check prevents collapse", "trloo", "no_hack_check", "<", "hacked/turn1"),
    Claim("PR reward raises Fast@1.2", "pr", "trloo", ">"),
    Claim("PRS raises Fast@1.2 over PR alone", "prs_soft", "pr", ">"),
    Claim("soft vs hard PRS", "prs_soft", "prs_hard", ">="),
    Claim("MRS stabilises training under a rollout/trainer mismatch", "mrs_bf16", "no_mrs_bf16", ">"),
    Claim("MRS is inert without a mismatch", "mrs", "trloo", "~"),
    Claim("STTS: context management beats vanilla history beyond training turns", STTS_A, STTS_B, ">",
          "fast@1.2/best_turn{S}"),
    Claim("control: TRLOO vs GRPO with fixed group sizes (single-turn episodes)", "single_turn", "single_turn_grpo",
          ">", control=True),
)


def margin_of(metric: str) -> float | None:
    """The plan's equivalence margin: 0.02 for Fast@p, correct and hacking rates, 0.05 for PR, None otherwise."""
    if metric.startswith(("fast@", "correct/", "hacked/")):
        return 0.02
    if metric.startswith("pr_correct/"):
        return 0.05
    return None


def verdict(lo: float, hi: float, direction: str, margin: float | None) -> str:
    """The plan's verdict for an effect interval ``[lo, hi]`` (module docstring)."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction={direction!r}: one of {DIRECTIONS}")
    if math.isnan(lo) or math.isnan(hi):
        return "inconclusive"
    within = margin is not None and -margin <= lo and hi <= margin
    if direction == "~":
        return "reproduced" if within else "not_reproduced" if lo > 0 or hi < 0 else "inconclusive"
    claimed, other = (lo > 0, hi < 0) if direction in (">", ">=") else (hi < 0, lo > 0)
    if claimed:
        return "reproduced"
    return "not_reproduced" if other or within else "inconclusive"


# --- observations of a tree -------------------------------------------------------------------------------------

#: (setting, variant, seed) -> metric -> Observation
Observations = dict[tuple[str, str, int], dict[str, Observation]]


def load_observations(root: str | Path) -> tuple[Observations, dict[str, int]]:
    """Every finished run's endpoints (and each finished STTS as ``stts/<context>``), and the turn counts ``T``
    (training/evaluation turns) and ``S`` (STTS turns) to fill the claims' metric names.

    Raises:
        ValueError: runs of one tree evaluated at different numbers of turns.
    """
    obs: Observations = {}
    turns = set()
    for run in finished_runs(root):
        obs[(run.setting, run.variant, run.seed)] = run_observations(run.path)
        turns.add(int(run_config(run.path)["mini2"]["max_turns"]))
        if run.variant == "trloo" and is_done(stts_dir(root, run.setting, run.seed)):
            for context, metrics in stts_observations(stts_dir(root, run.setting, run.seed)).items():
                obs[(run.setting, f"stts/{context}", run.seed)] = metrics
    if len(turns) > 1:
        raise ValueError(f"runs under {root} were evaluated at different turns {sorted(turns)}: one tree, one plan")
    return obs, {"T": turns.pop() if turns else 3, "S": STTS_TURNS}


def _values(obs: Observations, setting: str, variant: str, metric: str) -> dict[int, Observation]:
    return {seed: m[metric] for (st, v, seed), m in obs.items() if st == setting and v == variant and metric in m}


def bootstrap_effect(a: dict[int, Observation], b: dict[int, Observation], n_boot: int = 2000,
                     seed: int = 0) -> tuple[float, float]:
    """95 % problem-clustered bootstrap of the mean paired difference: each resample draws held-out problems with
    replacement once and applies the draw to every run of both variants."""
    seeds = sorted(set(a) & set(b))
    runs = [a[s] for s in seeds] + [b[s] for s in seeds]
    problems = sorted({p for o in runs for p in o.problems})
    if not seeds or not problems or any(o.num is None for o in runs):
        return float("nan"), float("nan")
    weights = bootstrap_weights(len(problems), n_boot, seed)  # (B, P)
    diffs = np.stack([a[s].resampled(weights, problems) - b[s].resampled(weights, problems) for s in seeds])
    with np.errstate(invalid="ignore"):
        effect = np.where(np.isnan(diffs).any(0), np.nan, diffs.mean(0))  # (B,)
    return percentile_interval(effect)


def claim_row(claim: Claim, setting: str, obs: Observations, turns: dict[str, int], n_boot: int = 2000,
              seed: int = 0, planned: int | None = None) -> dict:
    """One row of the table (module docstring) for ``claim`` in ``setting``; ``planned``: the plan's seeds for it."""
    metric = claim.metric.format(**turns)
    a, b = (_values(obs, setting, v, metric) for v in (claim.variant_a, claim.variant_b))
    interval = paired_interval({s: o.value for s, o in a.items()}, {s: o.value for s, o in b.items()})
    margin = margin_of(metric)
    boot_lo, boot_hi = bootstrap_effect(a, b, n_boot, seed)
    paired = sorted(set(a) & set(b))
    note = "" if interval.n >= 2 else f"fewer than 2 paired seeds ({len(a)} runs of A, {len(b)} of B)"
    if planned is not None and interval.n < planned:
        note = "; ".join(filter(None, [note, f"{interval.n} of the plan's {planned} paired seeds: incomplete"]))
    return {"claim": claim.name, "metric": metric, "variant_a": claim.variant_a, "variant_b": claim.variant_b,
            "n_seeds": interval.n, "effect": interval.mean, "ci_lo": interval.lo, "ci_hi": interval.hi,
            "verdict": verdict(interval.lo, interval.hi, claim.direction, margin), "setting": setting,
            "direction": claim.direction, "margin": margin,
            "mean_a": float(np.mean([a[s].value for s in paired])) if paired else float("nan"),
            "mean_b": float(np.mean([b[s].value for s in paired])) if paired else float("nan"),
            "boot_lo": boot_lo, "boot_hi": boot_hi, "control": claim.control, "note": note,
            "complete": planned is None or interval.n >= planned}


def claims_table(obs: Observations, turns: dict[str, int], claims: Sequence[Claim] = CLAIMS,
                 n_boot: int = 2000, seed: int = 0, planned_seeds: dict[str, int] | None = None) -> pd.DataFrame:
    """Every claim in every setting of ``obs``, with the cross-setting and control columns (module docstring).
    With ``planned_seeds`` (setting -> seeds), rows short of their setting's seeds are ``incomplete`` and a main
    result waits for every planned setting (``sensitivity_pending``)."""
    settings = sorted({st for st, _, _ in obs} | set(planned_seeds or ()), key=lambda s: (s != "main", s))
    planned = planned_seeds or {}
    table = pd.DataFrame([claim_row(c, st, obs, turns, n_boot, seed, planned.get(st)) for st in settings
                          for c in claims])
    return _control_notes(_cross_setting(table))[[*COLUMNS, *EXTRA_COLUMNS]]


def _cross_setting(table: pd.DataFrame) -> pd.DataFrame:
    """``agrees_in_sensitivity``: the effect has the same sign in every setting (NA with one setting, an undefined
    effect, or an equivalence claim); ``reported_verdict``: ``setting_dependent`` for a reproduced claim that
    does not agree."""
    key = ["claim", "metric", "variant_a", "variant_b"]
    several_settings = table["setting"].nunique() > 1
    agree, reported = [], []
    for _, row in table.iterrows():
        same = table[(table[key] == row[key]).all(axis=1)]
        effects = same["effect"].to_numpy(dtype=float)
        if len(same) < 2 or np.isnan(effects).any() or row["direction"] == "~":
            agree.append(pd.NA)
        else:
            agree.append(bool(len(set(np.sign(effects))) == 1))
        flips = agree[-1] is False and row["verdict"] == "reproduced"
        others = same[same["setting"] != row["setting"]]
        pending = (row["setting"] == "main" and row["verdict"] == "reproduced" and row["direction"] != "~"
                   and (others.empty or others["effect"].isna().any() or not others["complete"].all()))
        reported.append("incomplete" if not row["complete"] else "setting_dependent" if flips
                        else "sensitivity_pending" if pending and several_settings else row["verdict"])
    return table.assign(agrees_in_sensitivity=pd.array(agree, dtype="boolean"), reported_verdict=reported)


def control_ok(row) -> bool:
    """The control passes: not reproduced, and its interval within the margin."""
    margin = row["margin"]
    return (row["verdict"] != "reproduced" and not pd.isna(margin) and not pd.isna(row["ci_lo"])
            and -margin <= row["ci_lo"] and row["ci_hi"] <= margin)


def _control_notes(table: pd.DataFrame) -> pd.DataFrame:
    notes = table["note"].tolist()
    for setting in table["setting"].unique():
        ctrl = table[(table["setting"] == setting) & table["control"]]
        for i, row in ctrl.iterrows():
            notes[i] = "; ".join(filter(None, [notes[i], "control passes" if control_ok(row) else
                                               "control FAILS (interval not within the margin, or reproduced)"]))
        if (ctrl["verdict"] == "reproduced").any():
            for i in table.index[(table["setting"] == setting) & ~table["control"]]:
                notes[i] = "; ".join(filter(None, [notes[i], "WARNING: the control reproduced: the setting has a "
                                                              "confound"]))
    return table.assign(note=notes)


# --- per run and per variant ------------------------------------------------------------------------------------


def endpoint_metrics(turns: dict[str, int]) -> list[str]:
    """The plan's endpoints of an RL run: the primary, then the secondaries (per-turn Fast@1.2 at turns < T)."""
    t = turns["T"]
    return [primary(t), f"fast@1/turn{t}", "hacked/turn1", f"pr_correct/turn{t}", "train_reward",
            *(f"fast@1.2/turn{k}" for k in range(1, t))]


def runs_table(obs: Observations, turns: dict[str, int], n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per (setting, variant, seed, endpoint): the value and its 95 % problem-clustered bootstrap. The STTS
    pseudo-variants (``stts/<context>``) have the STTS metric only."""
    rows = []
    for (setting, variant, s), metrics in sorted(obs.items()):
        names = [stts_metric(turns["S"])] if variant.startswith("stts/") else endpoint_metrics(turns)
        for metric in names:
            if metric not in metrics:
                continue
            o = metrics[metric]
            weights = bootstrap_weights(len(o.problems), n_boot, seed) if o.problems else None
            lo, hi = percentile_interval(o.resampled(weights, list(o.problems))) if weights is not None else (
                float("nan"), float("nan"))
            rows.append({"setting": setting, "variant": variant, "seed": s, "metric": metric, "value": o.value,
                         "boot_lo": lo, "boot_hi": hi})
    return pd.DataFrame(rows, columns=["setting", "variant", "seed", "metric", "value", "boot_lo", "boot_hi"])


def variants_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (setting, variant, endpoint): the mean over seeds and its 95 % t-interval."""
    rows = []
    for (setting, variant, metric), group in runs.groupby(["setting", "variant", "metric"], sort=True):
        iv = t_interval(group["value"].to_numpy())
        rows.append({"setting": setting, "variant": variant, "metric": metric, "n_seeds": iv.n, "mean": iv.mean,
                     "ci_lo": iv.lo, "ci_hi": iv.hi})
    return pd.DataFrame(rows, columns=["setting", "variant", "metric", "n_seeds", "mean", "ci_lo", "ci_hi"])


def write_claims(root: str | Path, out: str | Path, n_boot: int = 2000, seed: int = 0,
                 planned_seeds: dict[str, int] | None = PLANNED_SEEDS) -> list[Path]:
    """``out`` (the claims table) and beside it ``<stem>_runs.csv`` and ``<stem>_variants.csv``; returns them.
    ``planned_seeds``: the plan's seeds per setting (``None``: judge whatever finished)."""
    obs, turns = _finished_observations(root)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = runs_table(obs, turns, n_boot, seed)
    paths = [out, out.with_name(f"{out.stem}_runs.csv"), out.with_name(f"{out.stem}_variants.csv")]
    claims = claims_table(obs, turns, CLAIMS, n_boot, seed, planned_seeds)
    for path, frame in zip(paths, (claims, runs, variants_table(runs)), strict=True):
        frame.to_csv(path, index=False)
    return paths


def write_runs(root: str | Path, out: str | Path, n_boot: int = 2000, seed: int = 0) -> Path:
    """Only the per-run endpoints of a tree (:func:`runs_table`): for trees that are not the plan's grid, e.g. the
    trloo runs repeated with another ``heldout_table`` (Table 2's mini2 row)."""
    obs, turns = _finished_observations(root)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs_table(obs, turns, n_boot, seed).to_csv(out, index=False)
    return out


def _finished_observations(root: str | Path) -> tuple[Observations, dict[str, int]]:
    """:func:`load_observations`, refusing a tree with no finished run."""
    obs, turns = load_observations(root)
    if not obs:
        raise ValueError(f"no finished run under {root} (a grid's root: <root>/<setting>/<variant>/seed<k>)")
    return obs, turns


def count_tested(table: pd.DataFrame, settings: Iterable[str] = ("main",)) -> int:
    """Claim rows with at least two paired seeds in ``settings`` (the control excluded): the number to state (the
    hacking check's claim is two rows, one per metric)."""
    rows = table[table["setting"].isin(list(settings)) & ~table["control"].astype(bool)]
    return int((rows["n_seeds"] >= 2).sum())
