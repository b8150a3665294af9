"""Rejection sampling of training samples: PRS (paper Eq. 9) and MRS (paper Eq. 6).

Both return *keep* masks (True = the sample takes gradient), drk.rl's one mask convention. A rejected sample
leaves the loss but its reward still counts in its group's baseline: pass ``keep=keep`` to
:func:`drk.rl.compute_advantages`.

- PRS, profiling-based rejection: a correct turn is kept with probability ``clip((PR - tau) / s, 0, 1)``
  ("soft"), or iff ``PR >= tau`` ("hard"); incorrect turns are always kept, they are the negative signal.
  It discourages "lazy" kernels that move a sliver of the work to Triton.
- MRS, mismatch rejection: the rollout engine and the trainer compute slightly different log-probs. A
  trajectory is kept only if the geometric-mean ratio ``w = exp(mean over its valid tokens of
  log pi_train - log pi_rollout)`` lies in ``[low, high]``; a turn is also dropped if any of its tokens has
  ratio below ``token_veto``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from drk.rl.advantages import _factorize_pairs


@dataclass(frozen=True)
class PRSConfig:
    """Profiling-based rejection sampling (Eq. 9)."""

    mode: Literal["soft", "hard", "off"] = "soft"  # soft: keep w.p. clip((PR-tau)/s); hard: PR >= tau
    tau: float = 0.3  # profiling-ratio threshold, in [0, 1]
    s: float = 0.1  # width of the soft ramp above tau (> 0); unused by "hard"
    on_missing: Literal["error", "keep", "reject"] = "error"  # correct turn without PR (CPU, failed profile)
    seed: int = 0  # seeds the keep draws when no generator is passed

    def __post_init__(self) -> None:
        if self.mode not in ("soft", "hard", "off"):
            raise ValueError(f"PRSConfig.mode={self.mode!r}: must be 'soft', 'hard' or 'off'")
        if not 0.0 <= self.tau <= 1.0:
            raise ValueError(f"PRSConfig.tau={self.tau}: must be in [0, 1] (the paper uses 0.3)")
        if not self.s > 0:
            raise ValueError(
                f"PRSConfig.s={self.s}: must be > 0 (the paper uses 0.1); use mode='hard' for a step"
            )
        if self.on_missing not in ("error", "keep", "reject"):
            raise ValueError(f"PRSConfig.on_missing={self.on_missing!r}: must be 'error', 'keep' or 'reject'")


def prs_keep_prob(correct, coverage, config: PRSConfig | None = None) -> np.ndarray:
    """Probability that PRS keeps each turn.

    Args:
        correct: shape (n,) bool, correct and not hacked.
        coverage: shape (n,) profiling ratio PR in [0, 1]; None or NaN where not measured.
        config: :class:`PRSConfig` (defaults: soft, tau = 0.3, s = 0.1).

    Returns:
        shape (n,) float64 in [0, 1]; 1 for every incorrect turn and for every turn when mode is "off".

    Raises:
        ValueError: a correct turn lacks PR and ``config.on_missing == "error"`` (on CPU, set PRS mode "off").
    """
    cfg = config or PRSConfig()
    ok = np.asarray(correct, dtype=bool).reshape(-1)
    pr = _float_array(coverage)
    if pr.shape != ok.shape:
        raise ValueError(f"correct and coverage must have one shape; got {ok.shape} and {pr.shape}")
    if cfg.mode == "off":
        return np.ones(ok.shape)
    if np.any(ok & ((pr < 0) | (pr > 1))):
        raise ValueError("coverage (profiling ratio) must lie in [0, 1]")
    missing = ok & np.isnan(pr)
    if missing.any() and cfg.on_missing == "error":
        raise ValueError(
            f"{int(missing.sum())} correct turn(s) have no profiling ratio: PRS needs a GPU profile. "
            "Set PRSConfig(mode='off') on CPU, or on_missing='keep'/'reject'"
        )
    if cfg.mode == "soft":
        prob = np.clip((pr - cfg.tau) / cfg.s, 0.0, 1.0)
    else:
        prob = (pr >= cfg.tau).astype(float)
    prob = np.where(missing, 1.0 if cfg.on_missing == "keep" else 0.0, prob)
    return np.where(ok, prob, 1.0)


def prs_keep_mask(correct, coverage, config: PRSConfig | None = None, *, rng=None) -> np.ndarray:
    """Draw the PRS keep mask (True = keep) from :func:`prs_keep_prob`.

    Args:
        correct: shape (n,) bool, correct and not hacked.
        coverage: shape (n,) profiling ratio; None/NaN where not measured.
        config: :class:`PRSConfig`.
        rng: a ``numpy.random.Generator``; by default one seeded with ``config.seed``, so the same inputs give
            the same mask. The trainer should pass a generator derived from its base seed and step.

    Returns:
        shape (n,) bool.
    """
    cfg = config or PRSConfig()
    prob = prs_keep_prob(correct, coverage, cfg)
    rng = rng if rng is not None else np.random.default_rng(cfg.seed)
    return rng.random(prob.shape) < prob


@dataclass(frozen=True)
class MRSConfig:
    """Mismatch rejection sampling (Eq. 6). The window was tuned for full fine-tuning against vLLM bf16."""

    low: float = 0.999  # keep a trajectory iff low <= w <= high, w = geometric-mean token ratio
    high: float = 1.001
    token_veto: float = 1e-4  # drop a turn if any token ratio pi_train / pi_rollout is below this; 0 = off
    enabled: bool = True  # False: keep everything but still compute the diagnostics

    def __post_init__(self) -> None:
        if not 0 < self.low <= 1.0 <= self.high:
            raise ValueError(f"MRSConfig window [{self.low}, {self.high}]: need 0 < low <= 1 <= high")
        if not 0 <= self.token_veto < 1:
            raise ValueError(
                f"MRSConfig.token_veto={self.token_veto}: must be in [0, 1) (0 disables the veto)"
            )


@dataclass
class MRSDiagnostics:
    """What MRS saw in one batch; log it every step (the window needs calibrating under LoRA)."""

    masked_frac: float  # share of turns rejected (window or veto)
    traj_masked_frac: float  # share of trajectories outside the window
    veto_frac: float  # share of turns with a vetoed token
    ratio_mean: float  # trajectory geometric-mean ratio w: mean, min, max, std
    ratio_min: float
    ratio_max: float
    ratio_std: float
    token_log_ratio_abs_max: float  # largest |log pi_train - log pi_rollout| over valid tokens
    ess_frac: float  # effective sample size of the trajectory weights w, over the number of trajectories
    kl_k1: float  # KL(rollout || train) per token, estimators k1 = E[-log r] and k3 = E[r - 1 - log r]
    kl_k3: float
    num_tokens: int
    num_trajectories: int

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def mrs_mask(
    logp_train,
    logp_rollout,
    prompt_id,
    traj_id,
    *,
    token_mask=None,
    config: MRSConfig | None = None,
) -> tuple[np.ndarray, MRSDiagnostics]:
    """MRS keep mask per turn (True = keep) and diagnostics (Eq. 6).

    Args:
        logp_train: shape (n, L) per-token log-probs from the trainer, one row per turn, padded; or a list of
            n 1-D arrays (ragged). numpy arrays or CPU/GPU torch tensors.
        logp_rollout: same layout, from the rollout engine (the sampling policy).
        prompt_id: shape (n,) prompt id of each turn.
        traj_id: shape (n,) trajectory id within its prompt; the window applies to the whole trajectory.
        token_mask: shape (n, L) bool (or ragged like the inputs), valid generated tokens; feedback and
            prompt tokens must be excluded here. Padding and entries NaN in either input never count.
        config: :class:`MRSConfig`.

    Returns:
        ``(keep, diagnostics)``: ``keep`` shape (n,) bool; all True when ``config.enabled`` is False, while
        the diagnostics still report what MRS *would* reject (to calibrate the window before enabling it).
        A trajectory with no valid token has w = 1.
    """
    cfg = config or MRSConfig()
    lt, lr, valid = _token_arrays(logp_train, logp_rollout, token_mask)
    prompt = np.unique(np.asarray(prompt_id), return_inverse=True)[1].reshape(-1)
    traj = _factorize_pairs(prompt, np.unique(np.asarray(traj_id), return_inverse=True)[1].reshape(-1))
    if traj.shape != (lt.shape[0],):
        raise ValueError(f"prompt_id/traj_id need one entry per row ({lt.shape[0]}); got {traj.shape}")
    log_ratio = np.where(valid, lt - lr, 0.0)  # shape (n, L)
    # Trajectory geometric mean: sum of log ratios over all its valid tokens / their count.
    k = int(traj.max(initial=-1)) + 1
    tok_per_traj = np.bincount(traj, weights=valid.sum(axis=1), minlength=k)
    sum_per_traj = np.bincount(traj, weights=log_ratio.sum(axis=1), minlength=k)
    w = np.exp(sum_per_traj / np.maximum(tok_per_traj, 1))  # shape (k,)
    traj_ok = (w >= cfg.low) & (w <= cfg.high)
    # The veto compares in log space: log r < log(token_veto); token_veto = 0 gives -inf, which never fires.
    with np.errstate(divide="ignore"):
        vetoed = np.any(valid & (log_ratio < np.log(cfg.token_veto)), axis=1)
    keep = traj_ok[traj] & ~vetoed
    diag = _mrs_diagnostics(log_ratio, valid, w, keep, traj_ok, vetoed)
    if not cfg.enabled:
        keep = np.ones_like(keep)
    return keep, diag


def _mrs_diagnostics(log_ratio, valid, w, keep, traj_ok, vetoed) -> MRSDiagnostics:
    """Summaries of the token log ratios and trajectory weights."""
    lr_valid = log_ratio[valid]
    r_valid = np.exp(lr_valid)
    n_tok, n_traj = int(lr_valid.size), int(w.size)
    nan = float("nan")
    finite_w = w[np.isfinite(w)]
    ess = finite_w.sum() ** 2 / np.sum(finite_w**2) if finite_w.size and np.any(finite_w > 0) else nan
    return MRSDiagnostics(
        masked_frac=float(np.mean(~keep)) if keep.size else nan,
        traj_masked_frac=float(np.mean(~traj_ok)) if n_traj else nan,
        veto_frac=float(np.mean(vetoed)) if vetoed.size else nan,
        ratio_mean=float(np.mean(w)) if n_traj else nan,
        ratio_min=float(np.min(w)) if n_traj else nan,
        ratio_max=float(np.max(w)) if n_traj else nan,
        ratio_std=float(np.std(w)) if n_traj else nan,
        token_log_ratio_abs_max=float(np.max(np.abs(lr_valid))) if n_tok else nan,
        ess_frac=float(ess / n_traj) if n_traj else nan,
        kl_k1=float(np.mean(-lr_valid)) if n_tok else nan,
        kl_k3=float(np.mean(r_valid - 1.0 - lr_valid)) if n_tok else nan,
        num_tokens=n_tok,
        num_trajectories=n_traj,
    )


def _token_arrays(logp_train, logp_rollout, token_mask):
    """Both log-prob inputs as padded float (n, L) arrays plus the valid-token mask."""
    lt, pad_t = _padded(logp_train)
    lr, pad_r = _padded(logp_rollout)
    if lt.shape != lr.shape:
        raise ValueError(f"logp_train and logp_rollout must have one shape; got {lt.shape} and {lr.shape}")
    valid = ~pad_t & ~pad_r & ~np.isnan(lt) & ~np.isnan(lr)
    if token_mask is not None:
        tm, tm_pad = _padded(token_mask)
        if tm.shape != lt.shape:
            raise ValueError(f"token_mask must have shape {lt.shape}; got {tm.shape}")
        valid &= ~tm_pad & (np.nan_to_num(tm) != 0)
    return np.where(valid, lt, 0.0), np.where(valid, lr, 0.0), valid


def _padded(x):
    """A (n, L) array, or a ragged list of 1-D arrays right-padded with NaN; returns (array, pad mask)."""
    if isinstance(x, (list, tuple)) and x and np.ndim(_to_numpy(x[0])) == 1:
        rows = [_to_numpy(r).astype(float).reshape(-1) for r in x]
        length = max((len(r) for r in rows), default=0)
        out = np.full((len(rows), length), np.nan)
        pad = np.ones((len(rows), length), dtype=bool)
        for i, r in enumerate(rows):
            out[i, : len(r)], pad[i, : len(r)] = r, False
        return out, pad
    arr = _to_numpy(x).astype(float)
    if arr.ndim != 2:
        raise ValueError(
            f"per-token arrays must be (n_turns, n_tokens) or a list of 1-D arrays; got {arr.shape}"
        )
    return arr, np.zeros(arr.shape, dtype=bool)


def _to_numpy(x) -> np.ndarray:
    """numpy view of an array-like or a (possibly bf16, possibly GPU) torch tensor."""
    if hasattr(x, "detach"):
        return x.detach().float().cpu().numpy()
    return np.asarray(x)


def _float_array(values) -> np.ndarray:
    """1-D float array with None mapped to NaN."""
    return np.array([np.nan if v is None else float(v) for v in np.asarray(values, dtype=object).reshape(-1)])
