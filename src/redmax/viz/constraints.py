"""Constraint plots: energy and constraint violation of a constrained run (``redmax plot``, ``run --plot``)."""

from __future__ import annotations

import os

import numpy as np

from redmax.errors import RedmaxError
from redmax.viz.plots import _mpl, _new_figure

__all__ = ["plot_constraints"]


def plot_constraints(result, path, title=None) -> str:
    """Two panels: kinetic, potential - V(0) and total - V(0) energy against time, and per constraint the largest
    absolute violation of its rows (``Result.constraint_violation``: g for equalities, max(c, 0) for
    inequalities) on a log scale.  Returns ``path``."""
    mpl = _mpl()
    path = os.fspath(path)
    t = np.asarray(result.t, dtype=float).reshape(-1)
    e = result.energy
    if "kinetic" not in e or "total" not in e:
        raise RedmaxError("plot_constraints: result.energy needs 'kinetic' and 'total'")
    viol = getattr(result, "constraint_violation", None) or {}
    title = title if title is not None else (result.meta or {}).get("scene")
    fig = _new_figure(mpl, (6.4, 6.4), 100)
    ax = fig.add_subplot(2, 1, 1)
    T = np.asarray(e["kinetic"], float)
    V = np.asarray(e["total"], float) - T
    ax.plot(t, T, label="kinetic", color="#d62728")
    ax.plot(t, V - V[0], label="potential - V(0)", color="#1f77b4")
    ax.plot(t, T + V - V[0], label="total - V(0)", color="k", linestyle="--", linewidth=1.6)
    ax.set_ylabel("energy")
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    if title:
        ax.set_title(str(title))
    bx = fig.add_subplot(2, 1, 2, sharex=ax)
    floor = 1e-16
    for name, v in viol.items():
        v = np.abs(np.asarray(v, float)).reshape(t.size, -1)
        if v.shape[1] == 0:
            continue
        bx.semilogy(t, np.maximum(v.max(axis=1), floor), label=name)
    if not viol:
        bx.text(0.5, 0.5, "no constraints", transform=bx.transAxes, ha="center")
    elif len(viol) <= 12:
        bx.legend(loc="best", fontsize="small")
    bx.set_xlabel("time")
    bx.set_ylabel("max |constraint violation|")
    bx.grid(alpha=0.3, which="both")
    fig.tight_layout()
    try:
        fig.savefig(path)
    except ValueError as exc:
        raise RedmaxError(f"plot_constraints: cannot write {path!r}: {exc}") from None
    return path
