"""Plot of an optimisation: the objective per iteration (log scale), as ``redmax optimize --plot`` writes it."""

from __future__ import annotations

import os

import numpy as np

from redmax.errors import RedmaxError
from redmax.viz.plots import _mpl, _new_figure

__all__ = ["plot_objective"]


def plot_objective(values, path, title=None) -> str:
    """Plot the objective values (one per iteration, first = initial parameters) on a log axis; returns path."""
    mpl = _mpl()
    path = os.fspath(path)
    v = np.asarray(values, dtype=float).reshape(-1)
    if v.size == 0:
        raise RedmaxError("plot_objective: no objective values to plot")
    fig = _new_figure(mpl, (6.4, 4.2), 100)
    ax = fig.add_subplot()
    it = np.arange(v.size)
    if np.all(v > 0):
        ax.semilogy(it, v, marker="o", color="k")
    else:
        ax.plot(it, v, marker="o", color="k")
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective")
    ax.grid(alpha=0.3, which="both")
    if title:
        ax.set_title(str(title))
    fig.tight_layout()
    try:
        fig.savefig(path)
    except ValueError as exc:
        raise RedmaxError(f"plot_objective: cannot write {path!r}: {exc}") from None
    return path
