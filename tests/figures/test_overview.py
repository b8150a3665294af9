import pandas as pd

from drk.data.paper import load_fast_p
from drk.figures.overview import FIG1_MODELS, plot_fast_p_bars


def test_fig1_has_one_bar_per_model_and_level():
    fig, ax = plot_fast_p_bars(load_fast_p().frame)
    assert len(ax.patches) == len(FIG1_MODELS) * 3
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(FIG1_MODELS)
    csv = pd.read_csv("drk/data/paper/table1_fast_p_eager.csv", comment="#")
    expected = csv[(csv.model == "Dr.Kernel-14B") & (csv.level == 2)].fast1_2.item()
    labels = [t.get_text() for t in ax.texts]
    assert f"{expected:.1f}" in labels


def test_fig1_skips_absent_models_and_draws_into_given_axes():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    df = load_fast_p().frame
    out_fig, out_ax = plot_fast_p_bars(df[df.model != "GPT-5"], ax=ax, p=2.0)
    assert out_ax is ax and out_fig is fig
    assert len(ax.patches) == (len(FIG1_MODELS) - 1) * 3
