"""The self-inclusion bias of GRPO, measured: Monte-Carlo shrink factors and the toy multi-turn bandit (Eq. 4).

GRPO compares each sample with a group mean that contains the sample itself. In expectation its policy
gradient is the true one times ``1 - 1/N`` (N = group size); TRLOO's leave-one-out baseline removes the factor.
With early termination the group at turn t has a random size N_t, so the shrink differs by turn and GRPO
silently re-weights turns. Everything here is vectorised numpy, seeded, and CPU-fast.

The bandit (used by every function here; the paper gives the numbers but not the exact model, so ours is):

- each rollout runs up to ``turns`` turns; after each turn but the last it stops with probability
  ``stop_prob``, independently of everything else;
- at each live turn the policy takes action a ~ Bernoulli(sigmoid(theta)); a = 1 is the "good" action;
- the reward is 0 for a = 0; for a = 1 it is 0, 0.5 or U[0.5, 1.5] with probabilities 0.4 / 0.4 / 0.2
  (mean ``REWARD_MEAN`` = 0.4), so the policy's choice matters and a good action still often earns nothing;
- the score of a turn is d log pi(a) / d theta = a - sigmoid(theta); returns are turn-level with discount gamma.

Because rewards depend only on the current action and stopping on nothing, the exact gradient of the expected
episode reward is known: d J / d theta_t = P(alive at t) * sigma'(theta_t) * REWARD_MEAN, which is what the
Monte-Carlo estimates are divided by.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from drk.provenance import write_provenance
from drk.rl.advantages import ESTIMATORS, dense_advantages

#: Mean reward of a good action: 0.4 * 0 + 0.4 * 0.5 + 0.2 * E[U[0.5, 1.5]].
REWARD_MEAN = 0.4


@dataclass(frozen=True)
class BanditConfig:
    """The toy multi-turn bandit of the paper's bias study (defaults are the paper's numbers)."""

    rollouts: int = 16  # K, rollouts per step (the group size at turn 1)
    turns: int = 3  # T
    stop_prob: float = 0.1  # probability of stopping after each turn but the last
    theta0: float = -2.0  # initial logit: sigmoid(-2) = 0.12 chance of the good action
    lr: float = 0.35  # plain gradient ascent step size
    steps: int = 1200
    gamma: float = 1.0  # discount of the turn-level return
    shared_theta: bool = True  # one logit for all turns (True) or one per turn (False)

    def __post_init__(self) -> None:
        if self.rollouts < 1 or self.turns < 1 or self.steps < 0:
            raise ValueError(f"BanditConfig: need rollouts >= 1, turns >= 1, steps >= 0; got {self}")
        if not 0.0 <= self.stop_prob < 1.0:
            raise ValueError(f"BanditConfig.stop_prob={self.stop_prob}: must be in [0, 1)")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"BanditConfig.gamma={self.gamma}: must be in [0, 1]")

    @property
    def alive_prob(self) -> np.ndarray:
        """Shape (turns,): P(a rollout reaches turn t) = (1 - stop_prob) ** (t - 1)."""
        return (1.0 - self.stop_prob) ** np.arange(self.turns)

    @property
    def optimal_reward(self) -> float:
        """Expected episode reward of the always-good policy: REWARD_MEAN * E[episode length]."""
        return float(REWARD_MEAN * self.alive_prob.sum())


def sample_rewards(rng: np.random.Generator, good: np.ndarray) -> np.ndarray:
    """Reward of each action (same shape as ``good``): 0 if bad, else 0 / 0.5 / U[0.5, 1.5] w.p. .4/.4/.2."""
    u, v = rng.random(good.shape), rng.random(good.shape)
    r = np.where(u < 0.4, 0.0, np.where(u < 0.8, 0.5, 0.5 + v))
    return np.where(good, r, 0.0)


def simulate_groups(rng, n_groups: int, config: BanditConfig, theta) -> dict[str, np.ndarray]:
    """Roll out ``n_groups`` independent groups of ``config.rollouts`` episodes at a fixed policy.

    Args:
        rng: numpy Generator.
        n_groups: number of groups M.
        config: the bandit.
        theta: scalar or shape (turns,) logits, or shape (M, 1, turns) per group.

    Returns:
        dict of arrays of shape (M, K, T): ``alive`` (bool), ``action`` (bool), ``reward``, ``returns``
        (turn-level, discounted), ``score`` (d log pi / d theta_t).
    """
    m, k, t = n_groups, config.rollouts, config.turns
    keep_going = rng.random((m, k, max(t - 1, 0))) >= config.stop_prob
    alive = np.concatenate([np.ones((m, k, 1), bool), np.cumprod(keep_going, axis=-1).astype(bool)], axis=-1)
    th = np.asarray(theta, dtype=float)
    p = 1.0 / (1.0 + np.exp(-(th if th.ndim == 3 else np.broadcast_to(th, (1, 1, t)))))  # (1 or M, 1, T)
    action = (rng.random((m, k, t)) < p) & alive
    reward = sample_rewards(rng, action)  # 0 on dead turns because action is False there
    returns = reward.copy()
    for turn in range(t - 2, -1, -1):  # G_t = R_t + gamma * G_{t+1}
        returns[..., turn] += config.gamma * returns[..., turn + 1]
    score = np.where(alive, action - p, 0.0)
    return dict(alive=alive, action=action, reward=reward, returns=np.where(alive, returns, 0.0), score=score)


def turn_advantages(groups: dict[str, np.ndarray], estimator: str) -> np.ndarray:
    """Advantages of simulated groups (M, K, T), grouping rollouts by (group, turn)."""
    swap = (0, 2, 1)  # put the K rollouts of one (group, turn) on the last axis
    adv = dense_advantages(
        groups["returns"].transpose(swap), groups["alive"].transpose(swap), estimator=estimator
    )
    return adv.transpose(swap)


def shrink_factors(
    group_sizes=tuple(range(2, 33)),
    *,
    n_groups: int = 20_000,
    seeds=(0,),
    theta: float = 0.0,
    estimators=("grpo", "trloo"),
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Monte-Carlo E[g_hat] / grad J for one-turn groups of each size N, beside the analytic 1 - 1/N.

    ``g_hat = (1/N) sum_i A_i * score_i`` per group; the estimate pools ``n_groups`` groups per seed, and its
    interval is the normal one from the pooled standard error (the groups are i.i.d.). All estimators see the
    same groups.

    Returns:
        Tidy DataFrame, one row per (estimator, N): estimator, N, shrink_analytic, shrink_mc, ci_lo, ci_hi,
        n_groups.
    """
    rows = []
    for n in group_sizes:
        config = BanditConfig(rollouts=int(n), turns=1)
        true_grad = _sigmoid_grad(theta) * REWARD_MEAN
        per_group = {e: [] for e in estimators}
        for seed in seeds:
            rng = np.random.default_rng([int(seed), int(n)])
            groups = simulate_groups(rng, n_groups, config, theta)
            for e in estimators:
                adv = turn_advantages(groups, e)
                per_group[e].append((adv * groups["score"]).sum(axis=(1, 2)) / n)  # shape (M,)
        for e in estimators:
            mean, lo, hi = _normal_ci(np.concatenate(per_group[e]) / true_grad, confidence)
            analytic = 1.0 - 1.0 / n if e == "grpo" else (1.0 if e in ("trloo", "rloo") else np.nan)
            rows.append(
                dict(
                    estimator=e,
                    N=int(n),
                    shrink_analytic=analytic,
                    shrink_mc=mean,
                    ci_lo=lo,
                    ci_hi=hi,
                    n_groups=n_groups * len(seeds),
                )
            )
    return pd.DataFrame(rows)


def per_turn_shrink_analytic(rollouts: int, stop_prob: float, turns: int = 3) -> np.ndarray:
    """GRPO's effective shrink at each turn when N_t ~ Binomial(K, (1 - q) ** (t - 1)).

    With g_hat_t = (1/K) sum over the N_t live rollouts of A_i * score_i, TRLOO gives E = (E[N_t]/K) g_t
    (unbiased) and GRPO gives E[(N_t - 1) 1{N_t >= 1}] / K * g_t, so the shrink is 1 - P(N_t >= 1) / E[N_t].

    Returns:
        shape (turns,).
    """
    alive = (1.0 - stop_prob) ** np.arange(turns)
    expected_n = rollouts * alive
    p_nonempty = 1.0 - (1.0 - alive) ** rollouts
    return 1.0 - p_nonempty / expected_n


def per_turn_shrink(
    rollouts=(4, 16),
    stop_probs=(0.1, 0.3, 0.5),
    *,
    turns: int = 3,
    n_groups: int = 20_000,
    seeds=(0,),
    theta: float = 0.0,
    estimators=("grpo", "trloo"),
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Monte-Carlo per-turn E[g_hat_t] / (d J / d theta_t) with early termination, beside the analytic value.

    Each turn has its own logit (all equal to ``theta``) so that the gradient of each turn is defined.

    Returns:
        Tidy DataFrame, one row per (estimator, K, stop_prob, turn): estimator, K, stop_prob, turn,
        mean_group_size (E[N_t]), shrink_analytic, shrink_mc, ci_lo, ci_hi, weight_vs_turn1 (analytic shrink
        relative to turn 1: how GRPO re-weights turns).
    """
    rows = []
    for k in rollouts:
        for q in stop_probs:
            config = BanditConfig(rollouts=int(k), turns=turns, stop_prob=float(q), shared_theta=False)
            true_grad = config.alive_prob * _sigmoid_grad(theta) * REWARD_MEAN  # shape (T,)
            est = {e: [] for e in estimators}
            for seed in seeds:
                groups = simulate_groups(
                    np.random.default_rng([int(seed), int(k), int(1000 * q)]), n_groups, config, theta
                )
                for e in estimators:
                    est[e].append((turn_advantages(groups, e) * groups["score"]).sum(axis=1) / k)  # (M, T)
            grpo = per_turn_shrink_analytic(int(k), float(q), turns)
            for e in estimators:
                analytic = grpo if e == "grpo" else np.ones(turns)
                g = np.concatenate(est[e]) / true_grad  # (M, T)
                for t in range(turns):
                    mean, lo, hi = _normal_ci(g[:, t], confidence)
                    rows.append(
                        dict(
                            estimator=e,
                            K=int(k),
                            stop_prob=float(q),
                            turn=t + 1,
                            mean_group_size=float(k * config.alive_prob[t]),
                            shrink_analytic=float(analytic[t]),
                            shrink_mc=mean,
                            ci_lo=lo,
                            ci_hi=hi,
                            weight_vs_turn1=float(analytic[t] / analytic[0]),
                        )
                    )
    return pd.DataFrame(rows)


def run_bandit(
    config: BanditConfig | None = None, *, estimators=("grpo", "trloo"), n_runs: int = 40, seed: int = 0
) -> pd.DataFrame:
    """Train the bandit policy with REINFORCE and each estimator, ``n_runs`` independent runs in parallel.

    The update is ``theta += lr * g_hat`` with ``g_hat`` the mean over all live turn samples of the batch of
    ``A * score`` (the per-sample loss average a trainer uses). Every estimator sees the same random numbers
    (common random numbers), so the runs are paired by ``run``.

    Returns:
        Tidy DataFrame, one row per (estimator, run, step): estimator, run, step (0-based), reward (mean
        episode reward of the step's K rollouts), expected_reward (exact J(theta) before the update), p_good
        (mean over turns of sigmoid(theta)).
    """
    cfg = config or BanditConfig()
    frames = []
    for e in estimators:
        if e not in ESTIMATORS:
            raise ValueError(f"estimator={e!r}: must be one of {ESTIMATORS}")
        rng = np.random.default_rng(seed)
        theta = np.full((n_runs, 1, cfg.turns), cfg.theta0)  # shared: all turns move together
        reward = np.empty((cfg.steps, n_runs))
        expected = np.empty((cfg.steps, n_runs))
        p_good = np.empty((cfg.steps, n_runs))
        for step in range(cfg.steps):
            p = 1.0 / (1.0 + np.exp(-theta[:, 0, :]))  # (R, T)
            expected[step] = REWARD_MEAN * (p * cfg.alive_prob).sum(axis=1)
            p_good[step] = p.mean(axis=1)
            groups = simulate_groups(rng, n_runs, cfg, theta)
            reward[step] = groups["reward"].sum(axis=(1, 2)) / cfg.rollouts
            theta = theta + cfg.lr * _bandit_gradient(groups, turn_advantages(groups, e), cfg.shared_theta)
        frames.append(_curve_frame(e, reward, expected, p_good))
    return pd.concat(frames, ignore_index=True)


def summarize_curves(
    df: pd.DataFrame, value: str = "reward", *, smooth: int = 1, confidence: float = 0.95
) -> pd.DataFrame:
    """Mean learning curve per estimator with a normal confidence band across runs.

    Args:
        df: output of :func:`run_bandit`.
        value: the column to summarise (``reward`` or ``expected_reward``).
        smooth: trailing moving-average window over steps, applied per run before averaging.
        confidence: band mass.

    Returns:
        Tidy DataFrame: estimator, step, mean, ci_lo, ci_hi, n_runs, value.
    """
    smoothed = (
        df.sort_values("step")
        .groupby(["estimator", "run"])[value]
        .transform(lambda s: s.rolling(smooth, min_periods=1).mean())
    )
    g = df.assign(_v=smoothed).groupby(["estimator", "step"])["_v"]
    mean, sd, n = g.mean(), g.std(ddof=1), g.count()
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * sd / np.sqrt(n)
    out = pd.DataFrame(dict(mean=mean, ci_lo=mean - half, ci_hi=mean + half, n_runs=n)).reset_index()
    return out.assign(value=value)


def final_rewards(df: pd.DataFrame, *, last: int = 50, confidence: float = 0.95) -> pd.DataFrame:
    """Final reward per estimator: each run's mean over its last ``last`` steps, then mean and CI over runs.

    Returns:
        DataFrame, one row per estimator: estimator, final_reward, ci_lo, ci_hi, final_expected_reward
        (exact J of the final policies), expected_ci_lo, expected_ci_hi, last_steps, n_runs.
    """
    tail = df[df["step"] >= df["step"].max() - last + 1]
    per_run = tail.groupby(["estimator", "run"])[["reward", "expected_reward"]].mean()
    rows = []
    for e, runs in per_run.groupby(level="estimator"):
        m, lo, hi = _normal_ci(runs["reward"].to_numpy(), confidence)
        me, loe, hie = _normal_ci(runs["expected_reward"].to_numpy(), confidence)
        rows.append(
            dict(
                estimator=e,
                final_reward=m,
                ci_lo=lo,
                ci_hi=hi,
                final_expected_reward=me,
                expected_ci_lo=loe,
                expected_ci_hi=hie,
                last_steps=last,
                n_runs=len(runs),
            )
        )
    return pd.DataFrame(rows)


def paired_difference(
    df: pd.DataFrame,
    a: str = "trloo",
    b: str = "grpo",
    *,
    value: str = "expected_reward",
    last: int = 50,
    confidence: float = 0.95,
) -> dict[str, float]:
    """Mean over runs of (a - b) in ``value`` over the last ``last`` steps, paired by run, with a normal CI.

    Runs of the two estimators share their random numbers (:func:`run_bandit`), so pairing removes most of the
    run-to-run noise.
    """
    tail = df[df["step"] >= df["step"].max() - last + 1]
    per_run = tail.groupby(["estimator", "run"])[value].mean().unstack("estimator")
    mean, lo, hi = _normal_ci((per_run[a] - per_run[b]).to_numpy(), confidence)
    return dict(mean=mean, ci_lo=lo, ci_hi=hi, n_runs=len(per_run), value=value, last_steps=last)


def save_table(df: pd.DataFrame, out_dir, stem: str, config: dict) -> list[Path]:
    """Write ``df`` as ``<stem>.csv`` and its config (with :func:`drk.provenance.write_provenance`'s stamp) as
    ``<stem>.json``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv, meta = out / f"{stem}.csv", out / f"{stem}.json"
    df.to_csv(csv, index=False)
    write_provenance(meta, {"config": config})
    return [csv, meta]


def _bandit_gradient(groups, adv, shared_theta: bool) -> np.ndarray:
    """Mean over live turn samples of A * score, per run; shape (R, 1, T) (equal across T if shared)."""
    contrib = adv * groups["score"]  # (R, K, T), zero on dead turns
    n_live = groups["alive"].sum(axis=(1, 2)).reshape(-1, 1, 1)
    per_turn = contrib.sum(axis=1, keepdims=True) / n_live  # (R, 1, T)
    if shared_theta:
        return np.broadcast_to(per_turn.sum(axis=2, keepdims=True), per_turn.shape)
    return per_turn


def _curve_frame(estimator, reward, expected, p_good) -> pd.DataFrame:
    """(steps, runs) arrays as a tidy frame."""
    steps, runs = reward.shape
    return pd.DataFrame(
        dict(
            estimator=estimator,
            run=np.tile(np.arange(runs), steps),
            step=np.repeat(np.arange(steps), runs),
            reward=reward.reshape(-1),
            expected_reward=expected.reshape(-1),
            p_good=p_good.reshape(-1),
        )
    )


def _sigmoid_grad(theta: float) -> float:
    """d sigmoid / d theta."""
    p = 1.0 / (1.0 + np.exp(-theta))
    return float(p * (1.0 - p))


def _normal_ci(x: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Mean of i.i.d. draws and its normal-approximation interval."""
    x = np.asarray(x, dtype=float)
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * x.std(ddof=1) / np.sqrt(x.size)
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def config_dict(config: BanditConfig) -> dict:
    """A bandit config as a plain dict (for :func:`save_table`)."""
    return asdict(config)
