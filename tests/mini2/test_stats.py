"""The seed statistics of PLAN.md: the t quantile against closed forms, t-intervals and paired differences by hand."""

import math

import numpy as np
import pytest

from drk.mini2.stats import (
    betainc,
    bootstrap_weights,
    paired_interval,
    percentile_interval,
    t_cdf,
    t_interval,
    t_quantile,
)


def t_cdf_odd(t, n):
    """Student-t CDF for odd n in closed form (Abramowitz & Stegun 26.7.3)."""
    theta = math.atan(t / math.sqrt(n))
    c, term, total = math.cos(theta), math.cos(theta), math.cos(theta) if n > 1 else 0.0
    for k in range(1, (n - 3) // 2 + 1):
        term *= (2 * k) / (2 * k + 1) * c * c
        total += term
    return 0.5 + (theta + math.sin(theta) * total) / math.pi


@pytest.mark.parametrize("q", [0.6, 0.9, 0.975, 0.995])
def test_t_quantile_matches_closed_forms(q):
    assert t_quantile(q, 1) == pytest.approx(math.tan(math.pi * (q - 0.5)), rel=1e-10)  # Cauchy
    assert t_quantile(q, 2) == pytest.approx((2 * q - 1) / math.sqrt(2 * q * (1 - q)), rel=1e-10)
    a = 4 * q * (1 - q)  # df = 4 (Hill 1970)
    assert t_quantile(q, 4) == pytest.approx(2 * math.sqrt(math.cos(math.acos(math.sqrt(a)) / 3) / math.sqrt(a) - 1),
                                             rel=1e-10)
    for n in (3, 5, 9, 29):  # odd df: the quantile inverts the closed-form CDF
        assert t_cdf_odd(t_quantile(q, n), n) == pytest.approx(q, abs=1e-11)
    assert t_quantile(1 - q, 7) == pytest.approx(-t_quantile(q, 7))


def test_t_quantile_values_used_by_the_plan():
    assert t_quantile(0.975, 4) == pytest.approx(2.7764451051977987, abs=1e-9)  # 5 seeds
    assert t_quantile(0.975, 1e7) == pytest.approx(1.959963984540054, abs=1e-5)  # -> the normal quantile
    assert t_cdf(0.0, 3) == 0.5 and betainc(2.0, 3.0, 0.0) == 0.0 and betainc(2.0, 3.0, 1.0) == 1.0
    assert betainc(1.0, 1.0, 0.3) == pytest.approx(0.3)  # uniform
    assert betainc(2.0, 1.0, 0.5) == pytest.approx(0.25)  # x^2
    with pytest.raises(ValueError):
        t_quantile(1.0, 4)


def test_t_interval_by_hand():
    iv = t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)  # sd (ddof 1) = sqrt(2.5)
    assert iv.n == 5 and iv.mean == 3.0
    assert iv.lo == pytest.approx(3.0 - half, abs=1e-9) and iv.hi == pytest.approx(3.0 + half, abs=1e-9)
    one = t_interval([0.4, float("nan")])  # NaN dropped; one value: no interval
    assert one.n == 1 and one.mean == 0.4 and math.isnan(one.lo) and math.isnan(one.hi)
    assert t_interval([]).n == 0


def test_paired_interval_uses_only_common_seeds():
    a = {0: 0.50, 1: 0.60, 2: 0.55, 3: 0.9}
    b = {0: 0.40, 1: 0.45, 2: 0.50, 4: 0.1}  # seeds 3 and 4 unpaired
    iv = paired_interval(a, b)
    d = np.array([0.10, 0.15, 0.05])
    half = t_quantile(0.975, 2) * d.std(ddof=1) / math.sqrt(3)
    assert iv.n == 3 and iv.mean == pytest.approx(0.10)
    assert (iv.lo, iv.hi) == pytest.approx((0.10 - half, 0.10 + half))


def test_bootstrap_weights_and_percentiles():
    w = bootstrap_weights(6, n_boot=500, seed=1)
    assert w.shape == (500, 6) and (w.sum(1) == 6).all()
    assert np.array_equal(w, bootstrap_weights(6, n_boot=500, seed=1))
    assert percentile_interval(np.arange(101.0)) == pytest.approx((2.5, 97.5))
    assert all(math.isnan(x) for x in percentile_interval(np.array([np.nan])))
