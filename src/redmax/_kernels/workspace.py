"""The layout of the Euler step's workspace W (one float array), shared by the integrators and the constraint rows."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from redmax._jit import njit

__all__ = ["Work", "WorkLayout", "work_offsets"]


class WorkLayout(NamedTuple):
    """Offsets of the step workspace W (one float array), the one place that defines its layout."""

    wR: int  # world joint rotations (nb, 9) row-major
    wp: int  # world joint positions (nb, 3)
    wS: int  # world motion subspace columns (n, 6)
    wI: int  # compact inertias about the world origin (nb, 10)
    wSd: int  # world Sdot qd of each joint (nb, 6)
    wV: int  # world twists (nb, 6)
    wQ: int  # 6x6 composites of the assembly (nb, 36)
    scr: int  # scratch (60)
    size: int  # total size


@njit(cache=True)
def work_offsets(nb, n):
    """The :class:`WorkLayout` of a model with nb bodies and n DOFs."""
    wS = 12 * nb
    wI = wS + 6 * n
    wSd = wI + 10 * nb
    wV = wSd + 6 * nb
    wQ = wV + 6 * nb
    scr = wQ + 36 * nb
    return WorkLayout(0, 9 * nb, wS, wI, wSd, wV, wQ, scr, scr + 60)


class Work:
    """Named views of a step workspace (Python side, for tests and the stage-by-stage path)."""

    def __init__(self, nb: int, n: int, dtype=np.float64):
        self.nb, self.n = nb, n
        self.off = work_offsets(nb, n)
        self.W = np.zeros(self.off.size, dtype=dtype)

    def view(self, name: str) -> np.ndarray:
        o = self.off
        nb, n = self.nb, self.n
        spec = {"R": (o.wR, (nb, 9)), "p": (o.wp, (nb, 3)), "S": (o.wS, (n, 6)), "I": (o.wI, (nb, 10)),
                "Sdot": (o.wSd, (nb, 6)), "V": (o.wV, (nb, 6)), "Q": (o.wQ, (nb, 6, 6))}[name]
        o, shape = spec
        return self.W[o:o + int(np.prod(shape))].reshape(shape)
