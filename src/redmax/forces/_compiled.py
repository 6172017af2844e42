"""Compiled forces: the force laws of the library as Numba kernels, driven by a flat *force program*.

A model's applied forces compile to three arrays (built by :func:`redmax.forces.program.build_program`):

* ``hdr`` (nf, 8) int64: per force ``[code, mode, ioff, ilen, foff, flen, bucket, implicit_only]`` (the last
  informational: the integrator forms ``f + D v`` for every force); ``code`` selects the force type's
  compiled kernel (its class's ``kernel``, :data:`redmax.forces.base.KERNEL_SIGNATURE`) through the dispatch
  written from the registry (:mod:`redmax.forces.registry`);
* ``fi`` int64 and ``ff`` float64: the forces' integer and float parameters, at ``ioff``/``foff``.

:func:`redmax.forces.registry.eval_forces` evaluates every force at one state and accumulates, all in world
coordinates at the world origin (angular first):

* ``fw`` (nb, 6): the maximal wrenches ``f``;
* per body pair, the blocks ``K`` and ``D`` of the maximal stiffness and damping (see :mod:`redmax.forces._points`),
  or, for two-point pair laws, a compact pair record;
* ``fr`` (n,), and the diagonals ``rK``, ``rD`` (n,) of the reduced forces' stiffness and damping;
* ``energy`` (NE,): the potentials by bucket (0 kinetic, unused here; 1 gravity; 2 joint springs; 3 springs;
  4 applied; 5 deformable: strands and elements).

Body points are stored in their joint's frame (``r_j = E_jb r_body``), so a point's world position needs only
the joint frame ``(R_wj, p_wj)`` of the world pass.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.forces._points import MAP_SCRATCH, map_point_law, point_xv

__all__ = [
    "F_BODY_DAMPING",
    "F_GRAVITY_K",
    "F_GROUND",
    "F_JOINT_DAMPING",
    "F_JOINT_LIMIT",
    "F_JOINT_SPRING",
    "F_PATH",
    "F_POINT_SPRING",
    "F_WORLD_POINT",
    "HDR",
    "KERNEL_SIGNATURE",
    "NE",
    "PAIR_FLOATS",
    "add_point_wrench",
    "point_finish",
    "point_views",
    "scratch_size",
]

F_BODY_DAMPING = 1  # floats: d (nb), c (3 nb) centres of mass in the joint frames
F_JOINT_SPRING = 2  # floats: k (n), rest (n)
F_JOINT_DAMPING = 3  # floats: d (n)
F_POINT_SPRING = 4  # ints: b0, b1; floats: r0 (3), r1 (3), ks, kd
F_PATH = 5  # ints: npts, cable, b...; floats: r (3 npts), k, d, L
F_WORLD_POINT = 6  # ints: b; floats: r (3), F (3)
F_GROUND = 7  # ints: npts, b...; floats: r (3 npts), kn, kd, kt, mu, normal (3), origin (3), dynamic sign
F_JOINT_LIMIT = 8  # ints: nd, dofs...; floats: lower (nd), upper (nd), k, d
F_GRAVITY_K = 9  # the gravity stiffness option: floats: m (nb), c (3 nb), gravity (3)

# The arguments of a force type's compiled kernel (:mod:`redmax.forces._compiled` for the outputs); it returns the
# (blocks, pair records) written so far: fi, ff: the program's ints and floats; io, fo: where this force's start;
# mode: its stiffness mode; bucket: its energy bucket (-1: none); Rw (nb, 9), pw (nb, 3), Vw (nb, 6): world joint
# frames and twists; q, qd (n,); want_blocks; fw (nb, 6), bpair, bK, bD: wrenches and 6x6 blocks; fr, rK, rD (n,):
# reduced forces and their stiffness and damping diagonals; energy (NE,); scratch; ppair, prec, pairs_on: the
# step's two-point pair records; nblk, npair: blocks and records written before this force.
KERNEL_SIGNATURE = ("fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK, rD, "
                    "energy, scratch, ppair, prec, pairs_on, nblk, npair")

HDR = 8  # header width
NE = 6  # energy buckets: kinetic, gravity, joint springs, springs, applied, deformable


@njit(cache=True)
def _com(Rw, pw, ff, o, i):
    """World centre of mass of body i (its joint-frame COM at ff[o + 3i])."""
    R = Rw[i]
    p = pw[i]
    c0 = ff[o + 3 * i]
    c1 = ff[o + 3 * i + 1]
    c2 = ff[o + 3 * i + 2]
    return (R[0] * c0 + R[1] * c1 + R[2] * c2 + p[0], R[3] * c0 + R[4] * c1 + R[5] * c2 + p[1],
            R[6] * c0 + R[7] * c1 + R[8] * c2 + p[2])


def scratch_size(npmax: int) -> int:
    """Floats of scratch :func:`eval_forces` needs for forces of at most ``npmax`` points."""
    return 30 * npmax + 18 * npmax * npmax + MAP_SCRATCH + 64


@njit(cache=True)
def _points(fi, ff, io, fo, npt, Rw, pw, Vw, x, xd):
    """Bodies (npt,) and, into x (npt, 3) and xd (npt, 3), the world positions and velocities of a force's points
    (bodies at fi[io:], joint-frame points at ff[fo:])."""
    bodies = fi[io:io + npt]
    for k in range(npt):
        x0, x1, x2, v0, v1, v2 = point_xv(Rw, pw, Vw, bodies[k], ff[fo + 3 * k:fo + 3 * k + 3])
        x[k, 0] = x0
        x[k, 1] = x1
        x[k, 2] = x2
        xd[k, 0] = v0
        xd[k, 1] = v1
        xd[k, 2] = v2
    return bodies


@njit(cache=True)
def path_law(x, xd, T, Tl, Tld, F, dFdx, dFdxd, scratch):
    """Forces of a tension ``T(l, ldot)`` along the path through x (n, 3) (notes §1.9.7-1.9.8).

    Point k receives ``T w_k`` with ``w_k = u_k - u_{k-1}`` (unit segment directions); with ``dl/dx_k = -w_k``,
    ``dldot/dxd_k = -w_k``, ``dldot/dx_k = g_{k-1} - g_k`` (``g_s = P_s dxd_s``, ``P_s = (1 - u_s u_s^T)/l_s``)
    and ``du_s/dx_{s+1} = P_s = -du_s/dx_s``:
    ``dF_k/dx_j = T dw_k/dx_j + w_k (Tl dl/dx_j + Tld dldot/dx_j)``, ``dF_k/dxd_j = -Tld w_k w_j^T``.
    ``T, Tl, Tld`` are the tension and its derivatives (already evaluated); outputs are overwritten.  ``scratch``
    holds at least 21 n floats of x's dtype.
    """
    n = x.shape[0]
    u = scratch[0:3 * n].reshape((n, 3))
    P = scratch[3 * n:12 * n].reshape((n, 3, 3))
    g = scratch[12 * n:15 * n].reshape((n, 3))
    w = scratch[15 * n:18 * n].reshape((n, 3))
    dld = scratch[18 * n:21 * n].reshape((n, 3))
    for k in range(21 * n):
        scratch[k] = 0.0
    for s in range(n - 1):
        d0 = x[s + 1, 0] - x[s, 0]
        d1 = x[s + 1, 1] - x[s, 1]
        d2 = x[s + 1, 2] - x[s, 2]
        ls = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        u[s, 0] = d0 / ls
        u[s, 1] = d1 / ls
        u[s, 2] = d2 / ls
        for r in range(3):
            for c in range(3):
                P[s, r, c] = ((1.0 if r == c else 0.0) - u[s, r] * u[s, c]) / ls
        for r in range(3):
            g[s, r] = (P[s, r, 0] * (xd[s + 1, 0] - xd[s, 0]) + P[s, r, 1] * (xd[s + 1, 1] - xd[s, 1])
                       + P[s, r, 2] * (xd[s + 1, 2] - xd[s, 2]))
        for r in range(3):
            w[s, r] += u[s, r]
            w[s + 1, r] -= u[s, r]
    for k in range(n):
        for r in range(3):
            F[k, r] = T * w[k, r]
    for s in range(n - 1):
        for r in range(3):
            dld[s + 1, r] += g[s, r]
            dld[s, r] -= g[s, r]
    for k in range(n):
        for j in range(n):
            for r in range(3):
                for c in range(3):
                    v = w[k, r] * (-Tl * w[j, c] + Tld * dld[j, c])
                    if k < n - 1:
                        if j == k + 1:
                            v += T * P[k, r, c]
                        elif j == k:
                            v -= T * P[k, r, c]
                    if k > 0:
                        if j == k:
                            v -= T * P[k - 1, r, c]
                        elif j == k - 1:
                            v += T * P[k - 1, r, c]
                    dFdx[k, j, r, c] = v
                    dFdxd[k, j, r, c] = -Tld * w[k, r] * w[j, c]


@njit(cache=True)
def path_length(x):
    """Total length of the path through x (n, 3)."""
    l = 0.0 * x[0, 0]
    for s in range(x.shape[0] - 1):
        d0 = x[s + 1, 0] - x[s, 0]
        d1 = x[s + 1, 1] - x[s, 1]
        d2 = x[s + 1, 2] - x[s, 2]
        l += np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    return l


@njit(cache=True)
def path_rate(x, xd):
    """Rate of the total length of the path through x with point velocities xd."""
    ld = 0.0 * x[0, 0]
    for s in range(x.shape[0] - 1):
        d0 = x[s + 1, 0] - x[s, 0]
        d1 = x[s + 1, 1] - x[s, 1]
        d2 = x[s + 1, 2] - x[s, 2]
        ls = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        ld += (d0 * (xd[s + 1, 0] - xd[s, 0]) + d1 * (xd[s + 1, 1] - xd[s, 1]) + d2 * (xd[s + 1, 2] - xd[s, 2])) / ls
    return ld


@njit(cache=True)
def ground_law(x, xd, kn, kd, kt, mu, nrm, org, sgn, F, dFdx, dFdxd):
    """Penalty contact of points with the plane through ``org`` with unit normal ``nrm`` (notes §1.9.6,
    Geilinger et al. 2020); only the ``[k, k]`` derivative blocks are written.  Returns the energy
    ``sum kn d^2 / 2`` over penetrating points.

    For ``d = n . (x - o) < 0``: normal ``-kn d n - kd (n . xd) n``; tangential velocity ``a = (1 - n n^T) xd``;
    static friction ``-kt a`` when ``mu kn |d| > kt |a|``, else dynamic ``sgn mu kn d a / |a|`` (magnitude
    ``mu kn |d|``, opposing a for ``sgn = 1``; ``sgn = -1`` is the original RedMax code's sign, along a:
    ``GroundContact(dynamic_friction="original")``).  No friction when ``|a| = 0`` in the dynamic regime (e.g.
    ``mu = 0``): the direction is undefined and the force is zero there.
    """
    e = 0.0 * x[0, 0]
    for k in range(x.shape[0]):
        for r in range(3):
            F[k, r] = 0.0
            for c in range(3):
                dFdx[k, k, r, c] = 0.0
                dFdxd[k, k, r, c] = 0.0
        d = (nrm[0] * (x[k, 0] - org[0]) + nrm[1] * (x[k, 1] - org[1]) + nrm[2] * (x[k, 2] - org[2]))
        if not d.real < 0.0:
            continue
        e += 0.5 * kn * d * d
        vn = nrm[0] * xd[k, 0] + nrm[1] * xd[k, 1] + nrm[2] * xd[k, 2]
        a0 = xd[k, 0] - vn * nrm[0]
        a1 = xd[k, 1] - vn * nrm[1]
        a2 = xd[k, 2] - vn * nrm[2]
        an = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        static = mu * kn * abs(d.real) > kt * an.real
        for r in range(3):
            F[k, r] = -kn * d * nrm[r] - kd * vn * nrm[r]
        for r in range(3):
            for c in range(3):
                dFdx[k, k, r, c] = -kn * nrm[r] * nrm[c]
                dFdxd[k, k, r, c] = -kd * nrm[r] * nrm[c]
        if static:
            a = (a0, a1, a2)
            for r in range(3):
                F[k, r] += -kt * a[r]
                for c in range(3):
                    dFdxd[k, k, r, c] += -kt * ((1.0 if r == c else 0.0) - nrm[r] * nrm[c])
        elif an.real > 0.0:
            t = (a0 / an, a1 / an, a2 / an)
            for r in range(3):
                F[k, r] += sgn * mu * kn * d * t[r]
            for r in range(3):
                for c in range(3):
                    dFdx[k, k, r, c] += sgn * mu * kn * t[r] * nrm[c]
            # d t / d xd = (1 - t t^T) / |a| (1 - n n^T)
            for r in range(3):
                for c in range(3):
                    s = 0.0 * d
                    for m in range(3):
                        s += ((1.0 if r == m else 0.0) - t[r] * t[m]) * ((1.0 if m == c else 0.0) - nrm[m] * nrm[c])
                    dFdxd[k, k, r, c] += sgn * mu * kn * d * s / an
    return e


PAIR_FLOATS = 46  # x0 (3), x1 (3), xd0 (3), xd1 (3), F0 (3), G (9), D (9), wK, flag, cD kd, Ks (9), w


@njit(cache=True)
def _pair_record(prec, t, x, xd, F, dFdx, dFdxd, mode):
    """Record a two-point pair law (F_1 = -F_0, F_0 a function of x_1 - x_0 and xd_1 - xd_0) for the assembly:
    the force's own parts ``Ks = w sym(dF_0/dx_1)`` (w = 0 in stiffness mode "none", else 1), ``D = dF_0/dxd_1``
    and ``w``; the integrator fills the step's combination (``G``, ``wK``; see
    :func:`redmax.integrators._linearize.linearize_forces` and ``_assembly.assemble_stage``)."""
    rec = prec[t]
    w = 0.0 if mode == 2 else 1.0
    for r in range(3):
        rec[r] = x[0, r]
        rec[3 + r] = x[1, r]
        rec[6 + r] = xd[0, r]
        rec[9 + r] = xd[1, r]
        rec[12 + r] = F[0, r]
        for c in range(3):
            rec[36 + 3 * r + c] = w * 0.5 * (dFdx[0, 1, r, c] + dFdx[0, 1, c, r])
            rec[24 + 3 * r + c] = dFdxd[0, 1, r, c]
    rec[34] = 0.0
    rec[45] = w


@njit(cache=True)
def add_point_wrench(fw, b, x0, x1, x2, f0, f1, f2):
    """fw[b] += [x x f; f] (b >= 0)."""
    fw[b, 0] += x1 * f2 - x2 * f1
    fw[b, 1] += x2 * f0 - x0 * f2
    fw[b, 2] += x0 * f1 - x1 * f0
    fw[b, 3] += f0
    fw[b, 4] += f1
    fw[b, 5] += f2


@njit(cache=True)
def _point_spring_pair(fi, ff, io, fo, mode, Rw, pw, Vw, fw, ppair, prec, t):
    """Point spring in pair mode, in registers: wrenches and the pair record (the isotropic law
    ``dF_0/dx_1 = ks 1``, ``dF_0/dxd_1 = kd 1``; flag rec[34] = 1 lets the assembly use its closed-form
    common-ancestor block).  Returns the potential energy."""
    b0 = fi[io]
    b1 = fi[io + 1]
    x0, x1, x2, u0, u1, u2 = point_xv(Rw, pw, Vw, b0, ff[fo:fo + 3])
    y0, y1, y2, v0, v1, v2 = point_xv(Rw, pw, Vw, b1, ff[fo + 3:fo + 6])
    ks = ff[fo + 6]
    kd = ff[fo + 7]
    d0, d1, d2 = y0 - x0, y1 - x1, y2 - x2
    e0, e1, e2 = v0 - u0, v1 - u1, v2 - u2
    f0, f1, f2 = ks * d0 + kd * e0, ks * d1 + kd * e1, ks * d2 + kd * e2
    if b0 >= 0:
        add_point_wrench(fw, b0, x0, x1, x2, f0, f1, f2)
    if b1 >= 0:
        add_point_wrench(fw, b1, y0, y1, y2, -f0, -f1, -f2)
    ppair[t, 0] = b0
    ppair[t, 1] = b1
    rec = prec[t]
    w = 0.0 if mode == 2 else 1.0
    rec[0] = x0
    rec[1] = x1
    rec[2] = x2
    rec[3] = y0
    rec[4] = y1
    rec[5] = y2
    rec[6] = u0
    rec[7] = u1
    rec[8] = u2
    rec[9] = v0
    rec[10] = v1
    rec[11] = v2
    rec[12] = f0
    rec[13] = f1
    rec[14] = f2
    for k in range(24, 33):
        rec[k] = 0.0
    for k in range(36, 45):
        rec[k] = 0.0
    rec[24] = kd
    rec[28] = kd
    rec[32] = kd
    rec[36] = w * ks
    rec[40] = w * ks
    rec[44] = w * ks
    rec[34] = 1.0
    rec[45] = w
    return 0.5 * ks * (d0 * d0 + d1 * d1 + d2 * d2).real


@njit(cache=True, inline="always")
def point_views(scratch, npt):
    """Views of a point force's scratch, the force and Jacobians zeroed: positions x, velocities xd, forces F
    (npt, 3), dF/dx and dF/dxd (npt, npt, 3, 3), and the rest of the scratch for the law."""
    o2 = 9 * npt
    x = scratch[0:3 * npt].reshape((npt, 3))
    xd = scratch[3 * npt:6 * npt].reshape((npt, 3))
    F = scratch[6 * npt:9 * npt].reshape((npt, 3))
    dFdx = scratch[o2:o2 + 9 * npt * npt].reshape((npt, npt, 3, 3))
    dFdxd = scratch[o2 + 9 * npt * npt:o2 + 18 * npt * npt].reshape((npt, npt, 3, 3))
    for k in range(6 * npt, o2 + 18 * npt * npt):
        scratch[k] = 0.0
    return x, xd, F, dFdx, dFdxd, scratch[o2 + 18 * npt * npt:]


@njit(cache=True, inline="always")
def point_finish(pair_law, bodies, x, xd, F, dFdx, dFdxd, diag, e, mode, bucket, energy, fw, want_blocks, bpair, bK,
                 bD, nblk, rest, ppair, prec, npair, pairs_on):
    """A point force's law ``F, dF/dx, dF/dxd`` at its points mapped to body wrenches and 6x6 blocks (or, for a
    two-point pair law in the step's fast assembly, a pair record); its energy ``e`` into its bucket.  Returns
    (blocks, pair records) written so far."""
    if bucket >= 0:
        energy[bucket] += e
    pair = pairs_on and want_blocks and pair_law and x.shape[0] == 2 and mode != 0
    nblk = map_point_law(bodies, x, xd, F, dFdx, dFdxd, diag, mode, fw, want_blocks and not pair, bpair, bK, bD,
                         nblk, rest)
    if pair:
        ppair[npair, 0] = bodies[0]
        ppair[npair, 1] = bodies[1]
        _pair_record(prec, npair, x, xd, F, dFdx, dFdxd, mode)
        npair += 1
    return nblk, npair
