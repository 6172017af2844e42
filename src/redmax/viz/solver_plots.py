"""What the solvers did, plotted from a Result: ``redmax.viz.plot(result, path, what=...)`` and ``redmax plot SCENE
OUT --what ...``.

* ``"energy"``: kinetic, potential and total energy (:func:`redmax.viz.plot_energy`);
* ``"violation"``: the largest |violation| of each constraint's rows per sample (log scale);
* ``"reactions"``: the norm of each constraint's reaction (joint torques, or the body wrench's force and moment);
* ``"iterations"``: the iterations per step the result holds: Newton (BDF1/SDIRK2/BDF2), PCG (per solve of a step:
  the step's own and its constraint rows'), friction (BiSP / SP), one panel each.
"""

from __future__ import annotations

import os

import numpy as np

from redmax.errors import RedmaxError
from redmax.viz.plots import _mpl, _new_figure, plot_energy

__all__ = ["WHAT", "plot", "solver_series"]

WHAT = ("energy", "violation", "reactions", "iterations")
ITERATIONS = (("newton_iterations", "Newton iterations"), ("pcg_iterations", "PCG iterations"),
              ("friction_iterations", "friction iterations"))


def solver_series(result) -> dict:
    """``{label: (steps, k) int array}`` of the iteration counts ``result.meta`` holds (an empty dict if none)."""
    out = {}
    meta = getattr(result, "meta", None) or {}
    for key, label in ITERATIONS:
        v = meta.get(key)
        if v is None:
            continue
        a = np.asarray(v)
        if a.size == 0 or a.dtype.kind not in "iuf":
            continue
        out[label] = a.reshape(a.shape[0], -1)
    return out


def plot(result, path, what: str = "energy", title=None) -> str:
    """Plot ``what`` (one of :data:`WHAT`) of ``result`` to ``path`` (any format matplotlib writes); returns the
    path.  A RedmaxError says when the result holds nothing of that kind (no constraints, no iteration counts)."""
    if what not in WHAT:
        raise RedmaxError(f"plot: what must be one of {WHAT}, got {what!r}")
    if what == "energy":
        return plot_energy(result, path, title=title)
    mpl = _mpl()
    path = os.fspath(path)
    t = np.asarray(result.t, dtype=float).reshape(-1)
    title = title if title is not None else (getattr(result, "meta", None) or {}).get("scene")
    if what == "iterations":
        series = solver_series(result)
        if not series:
            raise RedmaxError("plot: the result holds no iteration counts (Newton: bdf1/sdirk2/bdf2; PCG: "
                              "solver='pcg'; friction: joints or floors with friction)")
        fig = _new_figure(mpl, (6.4, 2.4 + 2.0 * len(series)), 100)
        for k, (label, a) in enumerate(series.items()):
            ax = fig.add_subplot(len(series), 1, k + 1)
            steps = np.arange(1, a.shape[0] + 1)
            x = t[steps] if t.size == a.shape[0] + 1 else steps
            cols = a if a.shape[1] <= 4 else a[:, :1]
            for c in range(cols.shape[1]):
                ax.step(x, cols[:, c], where="post", label=label if cols.shape[1] == 1 else f"{label}, solve {c + 1}")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
            if cols.shape[1] > 1:
                ax.legend(loc="best", fontsize="small")
            if k == 0 and title:
                ax.set_title(str(title))
        ax.set_xlabel("time" if t.size == a.shape[0] + 1 else "step")
        return _save(fig, path)
    data = getattr(result, "constraint_violation" if what == "violation" else "reactions", None) or {}
    if not data:
        raise RedmaxError(f"plot: the result has no constraints, so no {what} to plot")
    fig = _new_figure(mpl, (6.4, 4.2), 100)
    ax = fig.add_subplot(1, 1, 1)
    for name, v in data.items():
        v = np.asarray(v, dtype=float).reshape(t.size, -1)
        if v.shape[1] == 0:
            continue
        if what == "violation":
            ax.semilogy(t, np.maximum(np.abs(v).max(axis=1), 1e-16), label=name)
        elif v.shape[1] == 6:  # a body wrench (moment, force)
            ax.plot(t, np.linalg.norm(v[:, 3:], axis=1), label=f"{name} |force|")
            ax.plot(t, np.linalg.norm(v[:, :3], axis=1), label=f"{name} |moment|", linestyle="--")
        else:
            ax.plot(t, np.linalg.norm(v, axis=1), label=name)
    ax.set_xlabel("time")
    ax.set_ylabel("max |constraint violation|" if what == "violation" else "|reaction|")
    ax.grid(alpha=0.3, which="both")
    if len(data) <= 12:
        ax.legend(loc="best", fontsize="small")
    if title:
        ax.set_title(str(title))
    return _save(fig, path)


def _save(fig, path: str) -> str:
    fig.tight_layout()
    try:
        fig.savefig(path)
    except (ValueError, OSError) as exc:
        raise RedmaxError(f"plot: cannot write {path!r}: {exc}") from None
    return path
