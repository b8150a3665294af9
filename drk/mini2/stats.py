"""Seed statistics of ``results/mini2/PLAN.md``: Student-t intervals over seeds (paired or not) and the problem
bootstrap's resampling weights.

Why our own t quantile: the project's environment has no scipy, and the plan's intervals need ``t_{0.975, n-1}`` for
n = 5 seeds and upwards. :func:`t_quantile` inverts the Student-t CDF, written with the regularised incomplete beta
function (continued fraction, Numerical Recipes' ``betacf``), by bisection to 1e-12; the tests pin it to the
closed forms for 1, 2 and 4 degrees of freedom and to tabulated values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz), converging for x < (a+1)/(a+b+2)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x={x}: must be in [0, 1]")
    if x in (0.0, 1.0):
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))  # P(T > |t|)
    return 1.0 - tail if t >= 0 else tail


def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t with ``df`` > 0 degrees of freedom (e.g. ``t_quantile(0.975, 4)`` =
    2.7764...), by bisection on :func:`t_cdf` to 1e-12 relative."""
    if not 0.0 < q < 1.0 or not df > 0:
        raise ValueError(f"q={q}, df={df}: need 0 < q < 1 and df > 0")
    if q < 0.5:
        return -t_quantile(1.0 - q, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < q:
        lo, hi = hi, hi * 2.0
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if t_cdf(mid, df) < q else (lo, mid)
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` values and its two-sided t-interval (NaN bounds when n < 2)."""

    n: int
    mean: float
    lo: float
    hi: float


def t_interval(values, confidence: float = 0.95) -> Interval:
    """Mean and ``confidence`` Student-t interval of ``values`` (n - 1 degrees of freedom, sample sd with ddof=1).

    NaN values are dropped (a seed whose metric is undefined, e.g. a PR with no correct answer).
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return Interval(0, float("nan"), float("nan"), float("nan"))
    mean = float(v.mean())
    if v.size < 2:
        return Interval(1, mean, float("nan"), float("nan"))
    half = t_quantile(0.5 + confidence / 2.0, v.size - 1) * float(v.std(ddof=1)) / math.sqrt(v.size)
    return Interval(int(v.size), mean, mean - half, mean + half)


def paired_interval(a: dict[int, float], b: dict[int, float], confidence: float = 0.95) -> Interval:
    """PLAN.md's claim test: ``d_s = a[s] - b[s]`` over the seeds in both, its mean and t-interval."""
    seeds = sorted(set(a) & set(b))
    return t_interval([a[s] - b[s] for s in seeds], confidence)


def bootstrap_weights(n_items: int, n_boot: int = 2000, seed: int = 0) -> np.ndarray:
    """(n_boot, n_items) counts: how often each item (a held-out problem) is drawn in each resample with
    replacement of ``n_items`` items."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=n_boot).astype(float)


def percentile_interval(draws: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap ``draws`` (NaN draws ignored; NaN bounds when all are NaN)."""
    d = np.asarray(draws, dtype=float)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return float("nan"), float("nan")
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(d, [alpha, 1.0 - alpha])
    return float(lo), float(hi)
