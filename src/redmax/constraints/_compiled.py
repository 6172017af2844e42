"""Compiled constraint rows (RedMax paper §4): every constraint type evaluated from the step's world-frame workspace.

A constraint program is three flat arrays built by :mod:`redmax.constraints.program`: ``hdr`` (nc, H) int64 with
one row per constraint ``[code, ci_off, ci_len, cf_off, cf_len, rows_cap, react_off, react_len, flags]``, ``ci``
(int64) and ``cf`` (float64) parameters.  :func:`eval_rows` writes the rows of all constraints in order, each
type's through its own row function (:mod:`redmax.constraints.registry`):

* ``G`` (mcap, n): the row over the joint coordinates (``G q̇`` is the row's rate).  A maximal row is a world
  6-vector ``w`` per body (twist at the world origin, angular first, so ``w . V`` with ``V = [omega; v(origin)]``)
  mapped to coordinates as ``G[d] = S_w[d] . w`` over the body's ancestors' DOFs (= ``G_m J``, O(depth));
* ``g``: the position-level value (g for equalities, c for inequalities; feasible when ``c <= 0``);
* ``gd``: the explicit time term (``dg/dt = G q̇ + gd``);
* ``ga`` (mode 1): ``Ġ q̇ + gddot``, the velocity-product and explicit second-time-derivative terms of
  ``d²g/dt² = G q̈ + ga`` (acceleration-level Baumgarte);
* ``rkind``: 0 equality, 1 active inequality, 2 inactive inequality (present for the violation record only);
* ``WA`` (mcap, 6): the world 6-vector of the constraint's reported body (reactions of maximal rows).

Conventions: a point given in its body's joint frame ``x`` is at ``p = R_j x + p_j`` in the world and moves with
``pdot = v + omega x p``; ``n . pdot = w . V`` with ``w = [p x n; n]``.  The bias accelerations ``alpha_i``
(``J̇ q̇`` in world coordinates, gravity excluded) come from ``alpha_i = alpha_p + V_p x (S_i q̇_i) + Ṡ_i q̇_i``.
A body-frame twist is ``phi = Ad(E_wb)^-1 V`` and its derivative ``Ad(E_wb)^-1 V̇`` exactly, so body-twist rows
have no ``ẇ . V`` term.

Layout offsets of the workspace W (``redmax.integrators._stages.WorkLayout``) are passed in ``wo`` =
``(wR, wp, wS, wV, wSd)`` so that this module does not depend on the integrators.
"""

from __future__ import annotations

from redmax._jit import njit
from redmax._kernels.registers import cross, get9, rot, rot_mul, rot_t
from redmax.constraints._row_kernels import _clear_row, _frame, alpha_pass
from redmax.constraints.registry import constraint_rows

__all__ = ["F_DRIVES", "F_REACT_DOFS", "F_REACT_WORLD", "F_VARYING", "HDR", "eval_rows", "flags", "reactions"]

# header columns: type code, ints offset and length, floats offset and length, rows (capacity), reaction offset and
# length, flags
H_CODE, H_CI, H_NCI, H_CF, H_NCF, H_ROWS, H_ROFF, H_NREACT, H_FLAGS = range(9)
HDR = 9
F_VARYING = 1  # the row function writes a varying number of rows and clears them itself (violation: the largest)
F_REACT_DOFS = 2  # reaction -G^T lam / h on the listed DOFs (else the wrench on the first non-world body)
F_REACT_WORLD = 4  # reaction: the total wrench at the world origin
F_DRIVES = 8  # prescribed joints: the reaction also carries the joints' own forces


def flags(cls) -> int:
    """The header flags of a constraint type (see :class:`redmax.constraints.base.Constraint`)."""
    kind = cls.reaction_kind()
    return ((F_VARYING if cls.varying_rows else 0) | (F_REACT_DOFS if kind == "dofs" else 0)
            | (F_REACT_WORLD if kind == "world" else 0) | (F_DRIVES if cls.drives_joints else 0))


@njit(cache=True)
def eval_rows(hdr, ci, cf, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, roff, alpha):
    """Evaluate the rows of every constraint (see the module docstring).

    Args:
        hdr, ci, cf: the constraint program.  Ii: the packed model.  W: the kinematics workspace (world frames,
            S_w, twists, Sdot qd).  wo: (wR, wp, wS, wV, wSd) offsets into W.  Ejb (nb, 12): body placements
            in their joint frames (R row-major, p).  q, qd (n,): coordinates and rates.  t: time of the targets.
        mode: 0 rows (G, g, gd), 1 rows and acceleration terms (ga), 2 values only (g, gd, rkind; G untouched),
            3 maximal rows: G (mcap, 6 nb) gets each row's world 6-vectors on the bodies' twists (``G_m`` with
            ``G = G_m J``; zero for rows on joint coordinates, which have no maximal form), as mode 0 otherwise.
        G (mcap, n), g, gd, ga (mcap,), rkind (mcap,) int64, WA (mcap, 6): outputs.  roff (nc+1,): first row of
            each constraint (output).  alpha (nb, 6): scratch (bias accelerations, filled here in mode 1).
    Returns:
        The number of rows m.
    """
    n = q.shape[0]
    if mode == 1:
        alpha_pass(Ii, W, wo[2], wo[3], wo[4], qd, alpha)
    row = 0
    nc = hdr.shape[0]
    for c in range(nc):
        roff[c] = row
        io = hdr[c, H_CI]
        fo = hdr[c, H_CF]
        nrows = hdr[c, H_ROWS]
        if not hdr[c, H_FLAGS] & F_VARYING:
            for r in range(row, row + nrows):
                _clear_row(G, g, gd, ga, rkind, WA, r, n, mode)
        row = constraint_rows(hdr[c, H_CODE], ci, cf, io, fo, nrows, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga,
                              rkind, WA, alpha, row)
    roff[nc] = row
    return row


@njit(cache=True)
def reactions(hdr, ci, W, wR, wp, Ejb, G, WA, roff, lam, h, out):
    """Reaction of every constraint from the multipliers ``lam`` of its rows (``Result.reactions``):
    reduced constraints ``-G_r^T lam / h`` on their listed DOFs, maximal constraints the wrench
    ``-G_m^T lam / h`` on their reported body (body frame at its centre of mass, angular first).  ``out``
    (total reaction size,) is written at each constraint's ``react_off``."""
    nc = hdr.shape[0]
    for c in range(nc):
        fl = hdr[c, H_FLAGS]
        io = hdr[c, H_CI]
        ro = hdr[c, H_ROFF]
        nr = hdr[c, H_NREACT]
        for k in range(nr):
            out[ro + k] = 0.0
        r0 = roff[c]
        r1 = roff[c + 1]
        if fl & F_REACT_DOFS:  # the listed DOFs: ints [count, dofs...] (a ratio lists its A then its B dofs)
            for k in range(nr):
                d = ci[io + 1 + k]
                s = 0.0
                for r in range(r0, r1):
                    s += G[r, d] * lam[r]
                out[ro + k] = -s / h
            continue
        # maximal: the reported body (the first non-world body), or the world
        body = -1 if fl & F_REACT_WORLD else (ci[io] if ci[io] >= 0 else ci[io + 1])
        f0 = f1 = f2 = f3 = f4 = f5 = 0.0
        for r in range(r0, r1):
            f0 -= WA[r, 0] * lam[r] / h
            f1 -= WA[r, 1] * lam[r] / h
            f2 -= WA[r, 2] * lam[r] / h
            f3 -= WA[r, 3] * lam[r] / h
            f4 -= WA[r, 4] * lam[r] / h
            f5 -= WA[r, 5] * lam[r] / h
        if body < 0:  # world wrench at the origin (the total over its rows)
            out[ro], out[ro + 1], out[ro + 2], out[ro + 3], out[ro + 4], out[ro + 5] = f0, f1, f2, f3, f4, f5
            continue
        R, p = _frame(W, wR, wp, body)
        Rb = rot_mul(R, get9(Ejb[body], 0))
        c0, c1, c2 = rot(R, Ejb[body, 9], Ejb[body, 10], Ejb[body, 11])
        p0, p1, p2 = c0 + p[0], c1 + p[1], c2 + p[2]
        # body frame: [R^T (tau - p x f); R^T f]
        x0, x1, x2 = cross(p0, p1, p2, f3, f4, f5)
        t0, t1, t2 = rot_t(Rb, f0 - x0, f1 - x1, f2 - x2)
        u0, u1, u2 = rot_t(Rb, f3, f4, f5)
        out[ro], out[ro + 1], out[ro + 2], out[ro + 3], out[ro + 4], out[ro + 5] = t0, t1, t2, u0, u1, u2
