import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _wide_log(rng, metrics, steps=range(0, 30, 10)):
    """Rows as drk.train writes them to log.jsonl: one dict per step, one key per metric."""
    return [{"step": s, **{k: float(rng.uniform(0, 0.5)) for k in metrics}, "note": "text is dropped"} for s in steps]


@pytest.fixture
def training_log():
    """Three methods x two runs logging a few metrics (no grad norm, no perplexities), plus three PRS runs."""
    from drk.figures.training import tidy_training_log

    rng = np.random.default_rng(0)
    metrics = ["gym/fast@1/turn1", "gym/fast@1/turn2", "gym/fast@1/turn3", "gym/fast@1.2/turn3", "entropy",
               "gym/hacking_ratio", "gym/profiling_ratio"]
    frames = [tidy_training_log(_wide_log(rng, metrics), method=m, run=f"{m}-{r}")
              for m in ("trloo", "grpo", "no_hack_check") for r in range(2)]
    frames += [tidy_training_log(_wide_log(rng, ["gym/fast@1.2/turn3", "gym/profiling_ratio"]), method=m)
               for m in ("prs_soft", "prs_hard", "pr")]
    return pd.concat(frames, ignore_index=True)
