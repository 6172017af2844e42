"""The integrator's view of the applied forces: the step's linear system from the forces' own ``(f, K, D)``.

The compiled force kernels (:func:`redmax.forces.registry.eval_forces`) report what a force is, at one state: its
wrenches ``f``, its stiffness ``K = df/dx`` and its damping ``D = -df/dv`` (RedMax Eq. 2, Sueda's notes Eq. 2.86),
as 6x6 body-pair blocks, two-point pair records, and diagonals for the reduced forces.  They know nothing of the
time step.  The linearly implicit Euler step (RedMax Eq. 2)

    (M + h D - h^2 K) v1 = M v + h (f + D v - c) + ...

combines them here with the step's weights ``cK = -h^2`` and ``cD = h``: the blocks ``B = cK K + cD D``, the
reduced diagonal ``cK rK + cD rD`` and the right-hand side's forces ``f + D v`` (maximal: ``D V`` with the bodies'
world twists ``V``; pair laws: ``-dF_0/dxd_1 (xd_1 - xd_0)`` at their two points; reduced: ``rD qd``).
"""

from __future__ import annotations

from redmax._jit import njit
from redmax.forces._compiled import add_point_wrench

__all__ = ["linearize_forces"]


@njit(cache=True)
def linearize_forces(cK, cD, nblk, npair, bpair, bK, bD, bB, rK, rD, rdiag, fw, fw_rhs, fr, fr_rhs, Vw, qd, ppair,
                     prec):
    """Form the step's force terms from the forces' ``(f, K, D)`` (module docstring), in place.

    Args:
        cK, cD: the step's weights of K and D.  nblk, npair: the numbers of blocks and pair records.
        bpair (cap, 2), bK, bD (cap, 6, 6): the forces' blocks (world, at the world origin).  bB (cap, 6, 6): out,
            ``cK K + cD D``.  rK, rD (n,): reduced diagonals; rdiag (n,): out, ``cK rK + cD rD``.
        fw (nb, 6), fr (n,): the forces.  fw_rhs (nb, 6), fr_rhs (n,): out, ``f + D v``.  Vw (nb, 6): world
            twists.  qd (n,): joint rates.  ppair (capP, 2), prec (capP, PAIR_FLOATS): pair records, whose step
            fields (``G``, ``wK``, ``cD kd``) are filled here.
    """
    nb = fw.shape[0]
    for i in range(nb):
        for r in range(6):
            fw_rhs[i, r] = fw[i, r]
    for t in range(nblk):
        a = bpair[t, 0]
        b = bpair[t, 1]
        for r in range(6):
            s = 0.0 * Vw[b, 0]
            for c in range(6):
                d = bD[t, r, c]
                bB[t, r, c] = cK * bK[t, r, c] + cD * d
                s += d * Vw[b, c]
            fw_rhs[a, r] += s
    for t in range(npair):
        rec = prec[t]
        for k in range(9):
            rec[15 + k] = cK * rec[36 + k] - cD * rec[24 + k]
        rec[33] = cK * rec[45]
        rec[35] = cD * rec[24] if rec[34] == 1.0 else 0.0 * cD
        # f + D V at the two points: F_0 - dF_0/dxd_1 (xd_1 - xd_0), and its opposite
        e0 = rec[9] - rec[6]
        e1 = rec[10] - rec[7]
        e2 = rec[11] - rec[8]
        g0 = -(rec[24] * e0 + rec[25] * e1 + rec[26] * e2)
        g1 = -(rec[27] * e0 + rec[28] * e1 + rec[29] * e2)
        g2 = -(rec[30] * e0 + rec[31] * e1 + rec[32] * e2)
        if ppair[t, 0] >= 0:
            add_point_wrench(fw_rhs, ppair[t, 0], rec[0], rec[1], rec[2], g0, g1, g2)
        if ppair[t, 1] >= 0:
            add_point_wrench(fw_rhs, ppair[t, 1], rec[3], rec[4], rec[5], -g0, -g1, -g2)
    for a in range(fr.shape[0]):
        rdiag[a] = cK * rK[a] + cD * rD[a]
        fr_rhs[a] = fr[a] + rD[a] * qd[a]
