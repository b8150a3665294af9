"""Every paper figure and table, as functions of data.

Each ``plot_*`` function takes a tidy ``pandas.DataFrame`` (and optionally an ``ax``), returns ``(fig, ax)``,
and neither loads nor saves: loading lives in ``drk.figures.data`` style helpers and saving in
:func:`drk.figures.style.save_figure`.
"""
