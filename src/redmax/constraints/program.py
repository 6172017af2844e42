"""The compiled form of a model's constraints and the Python entry point to their rows.

:func:`build_program` packs the bound constraints of a model into the flat arrays of
:mod:`redmax.constraints._compiled`; :func:`evaluate_rows` evaluates all rows at a kinematics workspace (the
step's ``W``) and returns a :class:`Rows`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from redmax.constraints._compiled import HDR, eval_rows, flags, reactions
from redmax.constraints._row_kernels import INEQ_ACTIVE, INEQ_INACTIVE

__all__ = ["ConstraintProgram", "Rows", "build_program", "evaluate_rows", "program_for"]


@dataclass(frozen=True, eq=False)
class ConstraintProgram:
    """Flat arrays of a model's constraints.

    Attributes:
        constraints: the bound constraints.  hdr (nc, HDR), ci, cf: the kernel program.  Ejb (nb, 12): body
        placements (R row-major, p) in their joint frames.  mcap: rows capacity.  nreact: reaction size.
        react_off (nc+1,): offsets of each constraint's reaction.  viol_off (nc+1,): offsets of its violation
        columns.  has_inequality, time_dependent: flags.  pj_dofs: coordinates of prescribed joints.
    """

    constraints: tuple
    hdr: np.ndarray
    ci: np.ndarray
    cf: np.ndarray
    Ejb: np.ndarray
    mcap: int
    nreact: int
    react_off: np.ndarray
    viol_off: np.ndarray
    has_inequality: bool
    time_dependent: bool
    pj_dofs: np.ndarray

    @property
    def nc(self) -> int:
        return len(self.constraints)

    @property
    def nviol(self) -> int:
        return int(self.viol_off[-1])

    @property
    def names(self) -> tuple:
        return tuple(c.name for c in self.constraints)


def build_program(model, constraints) -> ConstraintProgram:
    """Pack bound constraints (in order) into a :class:`ConstraintProgram`."""
    from redmax.constraints.prescribed import prescribed_dofs

    nc = len(constraints)
    hdr = np.zeros((nc, HDR), dtype=np.int64)
    ci, cf = [], []
    rows = 0
    react = 0
    react_off = np.zeros(nc + 1, dtype=np.int64)
    viol_off = np.zeros(nc + 1, dtype=np.int64)
    for k, c in enumerate(constraints):
        ints, floats = c.encode()
        hdr[k] = [c.code, len(ci), len(ints), len(cf), len(floats), c.nrows, react, len(c.react_labels),
                  flags(type(c))]
        ci += [int(v) for v in ints]
        cf += [float(v) for v in floats]
        rows += c.nrows
        react_off[k] = react
        react += len(c.react_labels)
        viol_off[k + 1] = viol_off[k] + c.nviol
    react_off[nc] = react
    Ejb = np.zeros((model.nb, 12))
    Ejb[:, :9] = model.E_jb[:, :3, :3].reshape(model.nb, 9)
    Ejb[:, 9:] = model.E_jb[:, :3, 3]
    return ConstraintProgram(tuple(constraints), hdr, np.array(ci, dtype=np.int64), np.array(cf, dtype=float), Ejb,
                             max(rows, 1), react, react_off, viol_off, any(c.kind == "inequality" for c in constraints),
                             any(c.time_dependent for c in constraints), prescribed_dofs(constraints))


_PROGRAMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def program_for(model) -> ConstraintProgram:
    """The (cached) program of ``model.constraints``."""
    p = _PROGRAMS.get(model)
    if p is None:
        p = build_program(model, model.constraints)
        _PROGRAMS[model] = p
    return p


@dataclass
class Rows:
    """All rows at one state (coordinates of the joint tree).

    Attributes:
        m: number of rows.  G (m, n), g, gd, ga (m,): row, value, explicit time term, acceleration term (mode 1).
        kind (m,): 0 equality, 1 active inequality, 2 inactive inequality.  WA (m, 6): reported-body vectors.
        roff (nc+1,): first row of each constraint.
    """

    m: int
    G: np.ndarray
    g: np.ndarray
    gd: np.ndarray
    ga: np.ndarray
    kind: np.ndarray
    WA: np.ndarray
    roff: np.ndarray

    @property
    def eq(self) -> np.ndarray:
        return np.flatnonzero(self.kind == 0)

    @property
    def active(self) -> np.ndarray:
        return np.flatnonzero(self.kind == INEQ_ACTIVE)

    def violation(self, prog: ConstraintProgram) -> np.ndarray:
        """The violation columns (prog.nviol,): g for equality rows, max(c, 0) for inequality rows (one column
        = the largest over the rows for a constraint with a varying row set)."""
        out = np.zeros(prog.nviol)
        for k, c in enumerate(prog.constraints):
            r0, r1 = self.roff[k], self.roff[k + 1]
            o = prog.viol_off[k]
            v = self.g[r0:r1]
            if c.kind == "inequality":
                v = np.maximum(v, 0.0)
            if c.nviol == c.nrows:
                out[o:o + (r1 - r0)] = v
            elif r1 > r0:
                out[o] = v.max()
        return out


def evaluate_rows(model, prog: ConstraintProgram, W: np.ndarray, q, qd, t: float, mode: int = 0) -> Rows:
    """Rows of every constraint at a kinematics workspace W (``redmax.integrators._stages.kinematics_stage``).

    Args:
        mode: 0 rows, 1 rows with acceleration terms, 2 values only.
    """
    from redmax._kernels.workspace import work_offsets

    n = int(model.idx[-1])
    o = work_offsets(model.nb, n)
    wo = np.array([o.wR, o.wp, o.wS, o.wV, o.wSd], dtype=np.int64)
    mc = prog.mcap
    G = np.zeros((mc, n))
    g, gd, ga = np.zeros(mc), np.zeros(mc), np.zeros(mc)
    kind = np.zeros(mc, dtype=np.int64)
    WA = np.zeros((mc, 6))
    roff = np.zeros(prog.nc + 1, dtype=np.int64)
    alpha = np.zeros((model.nb, 6))
    Ii, _ = model.packed
    m = eval_rows(prog.hdr, prog.ci, prog.cf, Ii, W, wo, prog.Ejb, np.ascontiguousarray(q, dtype=float),
                  np.ascontiguousarray(qd, dtype=float), float(t), int(mode), G, g, gd, ga, kind, WA, roff, alpha)
    return Rows(m, G[:m], g[:m], gd[:m], ga[:m], kind[:m], WA[:m], roff)


def maximal_rows(model, prog: ConstraintProgram, W: np.ndarray, q, qd, t: float) -> np.ndarray:
    """``G_m`` (m, 6 nb): the rows of :func:`evaluate_rows` (same order and count, mode 0) on the bodies' world
    twists, ``G = G_m J``; the rows of constraints on joint coordinates (ratios, prescribed joints, limits) are
    zero (they have no maximal form)."""
    from redmax._kernels.workspace import work_offsets

    n = int(model.idx[-1])
    o = work_offsets(model.nb, n)
    wo = np.array([o.wR, o.wp, o.wS, o.wV, o.wSd], dtype=np.int64)
    mc = prog.mcap
    G = np.zeros((mc, 6 * model.nb))
    g, gd, ga = np.zeros(mc), np.zeros(mc), np.zeros(mc)
    kind = np.zeros(mc, dtype=np.int64)
    WA = np.zeros((mc, 6))
    roff = np.zeros(prog.nc + 1, dtype=np.int64)
    Ii, _ = model.packed
    m = eval_rows(prog.hdr, prog.ci, prog.cf, Ii, W, wo, prog.Ejb, np.ascontiguousarray(q, dtype=float),
                  np.ascontiguousarray(qd, dtype=float), float(t), 3, G, g, gd, ga, kind, WA, roff,
                  np.zeros((model.nb, 6)))
    return G[:m]


def constraint_reactions(model, prog: ConstraintProgram, W, rows: Rows, lam, h: float) -> np.ndarray:
    """Reactions (prog.nreact,) from the multipliers of all rows (0 for rows not in the solve)."""
    from redmax._kernels.workspace import work_offsets

    o = work_offsets(model.nb, int(model.idx[-1]))
    out = np.zeros(prog.nreact)
    lam_full = np.zeros(max(rows.m, 1))
    lam_full[:rows.m] = lam
    G = rows.G if rows.m else np.zeros((1, int(model.idx[-1])))
    WA = rows.WA if rows.m else np.zeros((1, 6))
    reactions(prog.hdr, prog.ci, W, o.wR, o.wp, prog.Ejb, G, WA, rows.roff, lam_full, float(h), out)
    return out


__all__ += ["INEQ_INACTIVE", "constraint_reactions", "maximal_rows"]
