"""Energies at one state for the compiled loops: kinetic and gravity from the world pass, the compiled forces'
potentials by bucket (:data:`redmax.forces._compiled.NE` buckets: kinetic, gravity, joint springs, springs,
applied, deformable)."""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._kernels.workspace import work_offsets
from redmax.forces._compiled import NE
from redmax.forces.registry import eval_forces_gated
from redmax.integrators._stages import kinematics_stage
from redmax.model.layout import offsets

__all__ = ["energies_at", "kinetic_gravity", "sample_energies"]


@njit(cache=True)
def kinetic_gravity(Ii, Ff, W, gscale):
    """(kinetic, gravity) energies from the kinematics stage: ``1/2 sum V.I V`` and ``-sum g . (m c)``."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    T = 0.0
    G = 0.0
    g0 = gscale * Ff[L.f_g]
    g1 = gscale * Ff[L.f_g + 1]
    g2 = gscale * Ff[L.f_g + 2]
    for i in range(nb):
        c = W[o.wI + 10 * i:o.wI + 10 * i + 10]
        v = W[o.wV + 6 * i:o.wV + 6 * i + 6]
        w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
        m, h0, h1, h2 = c[0], c[1], c[2], c[3]
        # I [w; u] = [Io w + h x u; m u - h x w]
        n0 = c[4] * w0 + c[5] * w1 + c[6] * w2 + h1 * u2 - h2 * u1
        n1 = c[5] * w0 + c[7] * w1 + c[8] * w2 + h2 * u0 - h0 * u2
        n2 = c[6] * w0 + c[8] * w1 + c[9] * w2 + h0 * u1 - h1 * u0
        f0 = m * u0 - (h1 * w2 - h2 * w1)
        f1 = m * u1 - (h2 * w0 - h0 * w2)
        f2 = m * u2 - (h0 * w1 - h1 * w0)
        T += 0.5 * (w0 * n0 + w1 * n1 + w2 * n2 + u0 * f0 + u1 * f1 + u2 * f2)
        G -= g0 * h0 + g1 * h1 + g2 * h2
    return T, G


@njit(cache=True, inline="always")
def sample_energies(Ii, Ff, hdr, fi, ff, q, qd, js, W, fw, bpair, bK, bD, fr, rK, rD, E, scratch):
    """Energies (NE,) at one state into E (kinematics and forces evaluated without blocks)."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    kinematics_stage(Ii, Ff, q, qd, js, W)
    for k in range(E.shape[0]):
        E[k] = 0.0
    for i in range(nb):
        for k in range(6):
            fw[i, k] = 0.0
    for a in range(n):
        fr[a] = 0.0
    Rw = W[o.wR:o.wR + 9 * nb].reshape((nb, 9))
    pw = W[o.wp:o.wp + 3 * nb].reshape((nb, 3))
    Vw = W[o.wV:o.wV + 6 * nb].reshape((nb, 6))
    eval_forces_gated(hdr, fi, ff, Rw, pw, Vw, q, qd, False, fw, bpair, bK, bD, fr, rK, rD, E, scratch, bpair,
                bK.reshape((bK.shape[0], 36)), False)
    T, G = kinetic_gravity(Ii, Ff, W, 1.0)
    E[0] = T
    E[1] += G


def energies_at(Ii, Ff, program, q, qd, js) -> np.ndarray:
    """Energies (NE,) of the compiled forces, kinetic and gravity at one state (fresh scratch arrays)."""
    nb, n = int(Ii[0]), int(Ii[1])
    cap = max(program.nblocks, 1)
    E = np.zeros(NE)
    sample_energies(Ii, Ff, program.hdr, program.fi, program.ff, np.ascontiguousarray(q, dtype=float),
                    np.ascontiguousarray(qd, dtype=float), np.ascontiguousarray(js, dtype=np.int64),
                    np.zeros(work_offsets(nb, n).size), np.zeros((nb, 6)), np.zeros((cap, 2), np.int64),
                    np.zeros((cap, 6, 6)), np.zeros((cap, 6, 6)), np.zeros(n), np.zeros(n), np.zeros(n), E,
                    np.zeros(program.nscratch))
    return E
