"""Batched RNEA and ABA across lanes of states, for models of fixed, revolute and prismatic joints.

A batch (B, n) is cut into blocks of ``LB`` states.  Within a block every per-body quantity is stored as a row
of ``LB`` lanes (structure of arrays), and every step of the recursion is one loop over the lanes with the same
straight-line arithmetic for every state: LLVM's loop vectoriser turns it into packed (AVX) arithmetic, several
states per instruction.  The body's joint enters through constants only, so one loop body serves the three
joint families: the joint frame in its parent's frame is

    ``R(q) = K0 + cos(q) K1 + sin(q) K2``,   ``p(q) = p0 + q Pa``,   ``S = [s_w; s_v]`` (constant),

with, for a revolute joint about the unit axis ``a`` with ``E_pj0 = (B, p0)`` (Rodrigues, Sueda notes §2.4.1),
``K0 = B a a^T``, ``K1 = B (1 - a a^T)``, ``K2 = B [a]``, ``Pa = 0``, ``S = [a; 0]``; for a prismatic joint
``K0 = B``, ``K1 = K2 = 0``, ``Pa = B a``, ``S = [0; a]``; for a fixed joint ``K0 = B`` and everything else 0.
The arithmetic is that of the single-state kernels: :func:`redmax.dynamics.rnea.rnea_into` (joint frames) and
:func:`redmax.dynamics.aba.hybrid_into` (world frame, one-DOF joints as ``articulated_one``), so results agree
with the single calls to rounding.

Why the layout is what it is: a body's record is a ``(rows, LB)`` slab of a ``(nb + 1, rows, LB)`` array, seen
through ``slab.ravel()`` and addressed as ``row * LB + lane`` with ``LB`` a compile-time constant.  LLVM then sees
constant distances between the rows and needs only a few run-time overlap checks per loop; with flat slices or
``carray`` views of the same memory it gave up on every loop ("too many memory checks needed",
``-pass-remarks-missed=loop-vectorize``), and so it does on loops touching more than ~60 rows (the ABA backward step
is therefore three loops).  The kernels use NumPy's error model: Python's would test every division for zero,
which keeps a loop from vectorising (a joint that moves no mass then gives non-finite accelerations, which the
caller reports).  Blocks of 32 lanes amortise the per-body set-up: per state they take well under half the time of
the scalar per-state kernel, 8 lanes about three quarters (panda, ``rnea``, B = 1024, one thread), and vectorised
cos and sin (:func:`_sincos`) save a further sixth.  The chunks of blocks run on redmax's threads
(:mod:`redmax._kernels.pool`).

Not covered (the caller uses the per-state kernels of :mod:`redmax.dynamics.batched`): other joint families,
external wrenches.

Size: RNEA and ABA over lanes share the lane layout, the block set-up and the vectorised sine and cosine; split
apart, each half would repeat them.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, U64, njit
from redmax._kernels.borrow import borrowed
from redmax._kernels.pool import pool_run
from redmax._kernels.tables import chunk_function, put, table_of, take1, take2
from redmax.joints.simple import PRISMATIC, REVOLUTE
from redmax.model.layout import SIMPLE_MAX, armature_offset, offsets

__all__ = ["ABA_LANES_CHUNK", "LB", "RNEA_LANES_CHUNK", "TABLE", "aba_lanes", "aba_work_size", "rnea_lanes",
           "rnea_work_size", "tables"]

LB = 32  # lanes per block (a compile-time constant of the kernels)

# columns of the per-body constant table C (nb, NC)
_K = 0  # K0, K1, K2 (27, row-major each)
_P0 = 27  # p0 (3)
_PA = 30  # Pa (3)
_S = 33  # S (6)
_MJ = 39  # joint-frame inertia for RNEA: I00 I01 I02 I11 I12 I22, h = m c (3), m
_MC = 49  # m, c (3), Ic (I00 I01 I02 I11 I12 I22) for ABA (world-frame inertia)
_ONE = 59  # 1 for a joint with a DOF, 0 for a fixed joint
_ARM = 60  # armature of the DOF
NC = 61

# rows of a body's record (each LB lanes)
_RV = 0  # RNEA: V (6), A (6), F (6), R (9), p (3)
_RA = 6
_RF = 12
_RR = 18
_RP = 27
RNEA_ROWS = 30
# ABA record: R (9), p (3), S (6), Ia (21), pA (6), v (6), c (6), U (6), Dinv, u, acc (6)
_AR = 0
_AP = 9
_AS = 12
_AI = 18
_AB = 39
_AVV = 45
_AC = 51
_AU = 57
_AD = 63
_AUU = 64
_AACC = 65
ABA_ROWS = 71
_IN = 6  # inputs per DOF: q, qd, x (qdd or tau), cos q, sin q, result


def tables(model):
    """``(C (nb, NC), par (nb,), dof (nb,), gravity (3,))`` for the lane kernels: the constants above, the parent
    of each body (``nb`` for the base) and its DOF (``n``, a row of zeros, for a fixed joint); None when a joint
    is of another family.  Cached on the model."""
    try:
        return model.__dict__["_lanes"]
    except KeyError:
        pass
    Ii, Ff = model.packed
    o = offsets(Ii)
    nb, n = o.nb, o.n
    if not np.all(np.asarray(Ii[o.o_typ:o.o_typ + nb]) <= SIMPLE_MAX):
        object.__setattr__(model, "_lanes", None)
        return None
    C = np.zeros((nb, NC))
    dof = np.full(nb, n, dtype=np.int64)
    par = np.array(Ii[o.o_par:o.o_par + nb], dtype=np.int64)
    par[par < 0] = nb
    arm = np.asarray(Ff[armature_offset(Ii):][:n])
    for i in range(nb):
        B = np.asarray(Ff[o.f_R + 9 * i:o.f_R + 9 * i + 9]).reshape(3, 3)
        K0, K1, K2 = B.copy(), np.zeros((3, 3)), np.zeros((3, 3))
        Pa, S = np.zeros(3), np.zeros(6)
        t = Ii[o.o_typ + i]
        if t in (REVOLUTE, PRISMATIC):
            jo = o.f_jp + Ii[o.o_jp + i]
            a = np.asarray(Ff[jo:jo + 3])
            dof[i] = Ii[o.o_idx + i]
            C[i, _ONE] = 1.0
            C[i, _ARM] = arm[dof[i]]
            if t == REVOLUTE:
                K0 = B @ np.outer(a, a)
                K1 = B - K0
                K2 = B @ np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
                S[:3] = a
            else:
                Pa = B @ a
                S[3:] = a
        C[i, _K:_K + 27] = np.concatenate([K0.ravel(), K1.ravel(), K2.ravel()])
        C[i, _P0:_P0 + 3] = Ff[o.f_p + 3 * i:o.f_p + 3 * i + 3]
        C[i, _PA:_PA + 3] = Pa
        C[i, _S:_S + 6] = S
        Mv = Ff[o.f_M + 36 * i:o.f_M + 36 * i + 36]
        C[i, _MJ:_MJ + 10] = [Mv[0], Mv[1], Mv[2], Mv[7], Mv[8], Mv[14], Mv[26], Mv[30], Mv[19], Mv[21]]
        Ic = Ff[o.f_I + 9 * i:o.f_I + 9 * i + 9]
        C[i, _MC:_MC + 10] = [Ff[o.f_m + i], *Ff[o.f_c + 3 * i:o.f_c + 3 * i + 3], Ic[0], Ic[1], Ic[2], Ic[4],
                              Ic[5], Ic[8]]
    grav = np.array(Ff[o.f_g:o.f_g + 3])
    for a in (C, par, dof, grav):
        a.setflags(write=False)
    rec = (C, par, dof, grav)
    object.__setattr__(model, "_lanes", rec)  # a private cache entry of the frozen model (dropped when pickled)
    return rec


@njit(inline="always")
def _r(a, row, l):
    return a[U64(row * LB) + l]


@njit(inline="always")
def _w(a, row, l, x):
    a[U64(row * LB) + l] = x


# ------------------------------------------------------------------------------------------------------------
# inverse dynamics


@njit(cache=True, nogil=True)
def rnea_lanes(C, par, dof, g, Q, V, A, out, Wk, T, ctl, helpers, fn):
    """Torques of every state (Q, V, A (B, n)) into ``out`` (B, n); gravity ``g`` (3,) (zero for none).
    ``Wk`` (chunks, :func:`rnea_work_size`) holds one workspace per chunk of blocks; the chunks run on redmax's
    threads (``T``: an int64 table of ``TABLE`` entries; ``ctl``, ``helpers``:
    :func:`redmax._kernels.pool.pool_for`; ``fn``: the address of :data:`RNEA_LANES_CHUNK`)."""
    _lanes_table(C, par, dof, g, Q, V, A, out, Wk, T)
    pool_run(ctl, fn, T.ctypes.data, Wk.shape[0], helpers)


TABLE = 32  # entries of a chunk table of the lane kernels


@njit(cache=True, inline="always")
def _lanes_table(C, par, dof, g, Q, V, X, out, Wk, T):
    k = put(T, 0, C)
    k = put(T, k, par)
    k = put(T, k, dof)
    k = put(T, k, g)
    k = put(T, k, Q)
    k = put(T, k, V)
    k = put(T, k, X)
    k = put(T, k, out)
    put(T, k, Wk)


@njit(cache=True, inline="always")
def _lanes_args(ctx, c):
    """The arguments of chunk c of :func:`_lanes_table`'s call: ``C, par, dof, g, Q, V, X, out, W, b0, b1``."""
    T = table_of(ctx, TABLE)
    C, k = take2(T, 0, np.float64)
    par, k = take1(T, k, np.int64)
    dof, k = take1(T, k, np.int64)
    g, k = take1(T, k, np.float64)
    Q, k = take2(T, k, np.float64)
    V, k = take2(T, k, np.float64)
    X, k = take2(T, k, np.float64)
    out, k = take2(T, k, np.float64)
    Wk, k = take2(T, k, np.float64)
    nblocks = (Q.shape[0] + LB - 1) // LB
    return C, par, dof, g, Q, V, X, out, Wk[c], c * nblocks // Wk.shape[0], (c + 1) * nblocks // Wk.shape[0]


@chunk_function
def RNEA_LANES_CHUNK(ctx, c):
    """Chunk c of :func:`rnea_lanes`."""
    _rnea_chunk(*_lanes_args(ctx, c))


def rnea_work_size(nb: int, n: int) -> int:
    """Workspace of one chunk: body records (nb + 1 with the base) and the DOF rows (n + 1 with a zero row)."""
    return (nb + 1) * RNEA_ROWS * LB + (n + 1) * _IN * LB


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _rnea_chunk(C, par, dof, g, Q, V, A, out, W, b0, b1):
    C, par, dof, g, Q, V, A, out, W = (borrowed(C), borrowed(par), borrowed(dof), borrowed(g), borrowed(Q),
                                       borrowed(V), borrowed(A), borrowed(out), borrowed(W))
    nb = C.shape[0]
    n = Q.shape[1]
    rec = RNEA_ROWS * LB
    WB = W[:(nb + 1) * rec].reshape((nb + 1, RNEA_ROWS, LB))
    IN = W[(nb + 1) * rec:(nb + 1) * rec + (n + 1) * _IN * LB].reshape((n + 1, _IN, LB))
    IN[:] = 0.0
    for blk in range(b0, b1):
        k0 = blk * LB
        L = min(LB, Q.shape[0] - k0)
        _load(Q, V, A, IN, k0, L)
        _rnea_block(C, par, dof, g, IN, WB, L)
        for a in range(n):
            x = IN[a].ravel()
            for l in range(L):
                out[k0 + l, a] = _r(x, 5, U64(l))


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _load(Q, V, X, IN, k0, L):
    """Transpose a block of states into the DOF rows (q, qd, x, cos q, sin q; lanes contiguous)."""
    for a in range(Q.shape[1]):
        x = IN[a].ravel()
        big = 0.0
        for l in range(U64(L)):
            q = Q[k0 + l, a]
            _w(x, 0, l, q)
            _w(x, 1, l, V[k0 + l, a])
            _w(x, 2, l, X[k0 + l, a])
            big = max(big, abs(q))
        if big < SINCOS_MAX:
            _sincos(x, L)
        else:
            for l in range(U64(L)):
                _w(x, 3, l, np.cos(_r(x, 0, l)))
                _w(x, 4, l, np.sin(_r(x, 0, l)))


# fdlibm's kernel coefficients of sin and cos on [-pi/4, pi/4], and pi/2 in three parts (the first two of 33 bits,
# so that j * part is exact for |j| < 2^20)
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11
_PIO2_1, _PIO2_2, _PIO2_3 = 1.57079632673412561417e+00, 6.07710050630396597660e-11, 2.02226624871116645580e-21
_TWO_OVER_PI = 6.36619772367581382433e-01
SINCOS_MAX = 1.0e5  # above: the C library's sin and cos (the reduction below loses digits)


# no reassociation here: the three-part reduction depends on its order
@njit(cache=True, fastmath={"contract"}, error_model="numpy")
def _sincos(x, L):
    """cos and sin of row 0 of a DOF record into rows 3 and 4, all lanes at once (the C library's scalar calls
    do not vectorise): ``j = round(q 2/pi)``, ``r = q - j pi/2`` (Cody-Waite, three parts), the kernel
    polynomials at r and the quadrant ``j mod 4``.  Within 2 ulp of the C library for |q| < SINCOS_MAX, and
    within 1e-30 absolute next to the zeros of cos and sin (tests/dynamics/test_batched.py)."""
    for l in range(U64(L)):
        v = _r(x, 0, l)
        j = np.rint(v * _TWO_OVER_PI)
        r = ((v - j * _PIO2_1) - j * _PIO2_2) - j * _PIO2_3
        z = r * r
        sr = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
        cr = 1.0 - 0.5 * z + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
        k = np.int64(j) & 3
        swap = (k & 1) == 1
        a = cr if swap else sr
        b = sr if swap else cr
        _w(x, 4, l, -a if (k & 2) == 2 else a)
        _w(x, 3, l, -b if ((k + 1) & 2) == 2 else b)


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _rnea_block(C, par, dof, g, IN, WB, L):
    """One block: the forward and backward passes of :func:`redmax.dynamics.rnea.rnea_into`, lane by lane."""
    nb = C.shape[0]
    base = WB[nb].ravel()
    for l in range(U64(L)):  # the base: V = 0, A = [0; -g]
        for k in range(6):
            _w(base, _RV + k, l, 0.0)
        _w(base, _RA, l, 0.0)
        _w(base, _RA + 1, l, 0.0)
        _w(base, _RA + 2, l, 0.0)
        _w(base, _RA + 3, l, -g[0])
        _w(base, _RA + 4, l, -g[1])
        _w(base, _RA + 5, l, -g[2])
    for i in range(nb):
        c = C[i]
        K00, K01, K02, K03, K04, K05, K06, K07, K08 = c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
        L00, L01, L02, L03, L04, L05, L06, L07, L08 = c[9], c[10], c[11], c[12], c[13], c[14], c[15], c[16], c[17]
        N00, N01, N02, N03, N04, N05, N06, N07, N08 = c[18], c[19], c[20], c[21], c[22], c[23], c[24], c[25], c[26]
        p00, p01, p02, pa0, pa1, pa2 = c[27], c[28], c[29], c[30], c[31], c[32]
        s0, s1, s2, s3, s4, s5 = c[33], c[34], c[35], c[36], c[37], c[38]
        I00, I01, I02, I11, I12, I22 = c[39], c[40], c[41], c[42], c[43], c[44]
        hh0, hh1, hh2, m, arm = c[45], c[46], c[47], c[48], c[60]
        d = dof[i]
        x = IN[d].ravel()
        pv = WB[par[i]].ravel()
        ov = WB[i].ravel()
        for l in range(U64(L)):
            co = _r(x, 3, l)
            si = _r(x, 4, l)
            R00 = K00 + co * L00 + si * N00
            R01 = K01 + co * L01 + si * N01
            R02 = K02 + co * L02 + si * N02
            R10 = K03 + co * L03 + si * N03
            R11 = K04 + co * L04 + si * N04
            R12 = K05 + co * L05 + si * N05
            R20 = K06 + co * L06 + si * N06
            R21 = K07 + co * L07 + si * N07
            R22 = K08 + co * L08 + si * N08
            qq = _r(x, 0, l)
            P0 = p00 + qq * pa0
            P1 = p01 + qq * pa1
            P2 = p02 + qq * pa2
            vd = _r(x, 1, l)
            ad = _r(x, 2, l)
            sq0, sq1, sq2, sq3, sq4, sq5 = s0 * vd, s1 * vd, s2 * vd, s3 * vd, s4 * vd, s5 * vd
            w0, w1, w2 = _r(pv, _RV, l), _r(pv, _RV + 1, l), _r(pv, _RV + 2, l)
            u0, u1, u2 = _r(pv, _RV + 3, l), _r(pv, _RV + 4, l), _r(pv, _RV + 5, l)
            g0, g1, g2 = _r(pv, _RA, l), _r(pv, _RA + 1, l), _r(pv, _RA + 2, l)
            h0, h1, h2 = _r(pv, _RA + 3, l), _r(pv, _RA + 4, l), _r(pv, _RA + 5, l)
            x0 = u0 - (P1 * w2 - P2 * w1)
            x1 = u1 - (P2 * w0 - P0 * w2)
            x2 = u2 - (P0 * w1 - P1 * w0)
            y0 = h0 - (P1 * g2 - P2 * g1)
            y1 = h1 - (P2 * g0 - P0 * g2)
            y2 = h2 - (P0 * g1 - P1 * g0)
            V0 = R00 * w0 + R10 * w1 + R20 * w2 + sq0  # V = X V_p + S qd
            V1 = R01 * w0 + R11 * w1 + R21 * w2 + sq1
            V2 = R02 * w0 + R12 * w1 + R22 * w2 + sq2
            V3 = R00 * x0 + R10 * x1 + R20 * x2 + sq3
            V4 = R01 * x0 + R11 * x1 + R21 * x2 + sq4
            V5 = R02 * x0 + R12 * x1 + R22 * x2 + sq5
            A0 = R00 * g0 + R10 * g1 + R20 * g2 + s0 * ad + V1 * sq2 - V2 * sq1  # A = X A_p + S qdd + ad(V) S qd
            A1 = R01 * g0 + R11 * g1 + R21 * g2 + s1 * ad + V2 * sq0 - V0 * sq2
            A2 = R02 * g0 + R12 * g1 + R22 * g2 + s2 * ad + V0 * sq1 - V1 * sq0
            A3 = R00 * y0 + R10 * y1 + R20 * y2 + s3 * ad + V4 * sq2 - V5 * sq1 + V1 * sq5 - V2 * sq4
            A4 = R01 * y0 + R11 * y1 + R21 * y2 + s4 * ad + V5 * sq0 - V3 * sq2 + V2 * sq3 - V0 * sq5
            A5 = R02 * y0 + R12 * y1 + R22 * y2 + s5 * ad + V3 * sq1 - V4 * sq0 + V0 * sq4 - V1 * sq3
            n0 = I00 * A0 + I01 * A1 + I02 * A2 + hh1 * A5 - hh2 * A4  # F = M A - ad(V)^T M V
            n1 = I01 * A0 + I11 * A1 + I12 * A2 + hh2 * A3 - hh0 * A5
            n2 = I02 * A0 + I12 * A1 + I22 * A2 + hh0 * A4 - hh1 * A3
            f0 = m * A3 - (hh1 * A2 - hh2 * A1)
            f1 = m * A4 - (hh2 * A0 - hh0 * A2)
            f2 = m * A5 - (hh0 * A1 - hh1 * A0)
            k0 = I00 * V0 + I01 * V1 + I02 * V2 + hh1 * V5 - hh2 * V4
            k1 = I01 * V0 + I11 * V1 + I12 * V2 + hh2 * V3 - hh0 * V5
            k2 = I02 * V0 + I12 * V1 + I22 * V2 + hh0 * V4 - hh1 * V3
            l0 = m * V3 - (hh1 * V2 - hh2 * V1)
            l1 = m * V4 - (hh2 * V0 - hh0 * V2)
            l2 = m * V5 - (hh0 * V1 - hh1 * V0)
            _w(ov, _RV, l, V0)
            _w(ov, _RV + 1, l, V1)
            _w(ov, _RV + 2, l, V2)
            _w(ov, _RV + 3, l, V3)
            _w(ov, _RV + 4, l, V4)
            _w(ov, _RV + 5, l, V5)
            _w(ov, _RA, l, A0)
            _w(ov, _RA + 1, l, A1)
            _w(ov, _RA + 2, l, A2)
            _w(ov, _RA + 3, l, A3)
            _w(ov, _RA + 4, l, A4)
            _w(ov, _RA + 5, l, A5)
            _w(ov, _RF, l, n0 + V1 * k2 - V2 * k1 + V4 * l2 - V5 * l1)
            _w(ov, _RF + 1, l, n1 + V2 * k0 - V0 * k2 + V5 * l0 - V3 * l2)
            _w(ov, _RF + 2, l, n2 + V0 * k1 - V1 * k0 + V3 * l1 - V4 * l0)
            _w(ov, _RF + 3, l, f0 + V1 * l2 - V2 * l1)
            _w(ov, _RF + 4, l, f1 + V2 * l0 - V0 * l2)
            _w(ov, _RF + 5, l, f2 + V0 * l1 - V1 * l0)
            _w(ov, _RR, l, R00)
            _w(ov, _RR + 1, l, R01)
            _w(ov, _RR + 2, l, R02)
            _w(ov, _RR + 3, l, R10)
            _w(ov, _RR + 4, l, R11)
            _w(ov, _RR + 5, l, R12)
            _w(ov, _RR + 6, l, R20)
            _w(ov, _RR + 7, l, R21)
            _w(ov, _RR + 8, l, R22)
            _w(ov, _RP, l, P0)
            _w(ov, _RP + 1, l, P1)
            _w(ov, _RP + 2, l, P2)
            _w(x, 5, l, arm * ad)  # the armature's torque; the backward pass adds S^T F
    for i in range(nb - 1, -1, -1):
        c = C[i]
        s0, s1, s2, s3, s4, s5 = c[33], c[34], c[35], c[36], c[37], c[38]
        one = c[_ONE]
        of = WB[i].ravel()
        pf = WB[par[i]].ravel()
        x = IN[dof[i]].ravel()
        for l in range(U64(L)):
            n0, n1, n2 = _r(of, _RF, l), _r(of, _RF + 1, l), _r(of, _RF + 2, l)
            f0, f1, f2 = _r(of, _RF + 3, l), _r(of, _RF + 4, l), _r(of, _RF + 5, l)
            _w(x, 5, l, one * _r(x, 5, l) + s0 * n0 + s1 * n1 + s2 * n2 + s3 * f0 + s4 * f1 + s5 * f2)
            R00, R01, R02 = _r(of, _RR, l), _r(of, _RR + 1, l), _r(of, _RR + 2, l)
            R10, R11, R12 = _r(of, _RR + 3, l), _r(of, _RR + 4, l), _r(of, _RR + 5, l)
            R20, R21, R22 = _r(of, _RR + 6, l), _r(of, _RR + 7, l), _r(of, _RR + 8, l)
            P0, P1, P2 = _r(of, _RP, l), _r(of, _RP + 1, l), _r(of, _RP + 2, l)
            Rf0 = R00 * f0 + R01 * f1 + R02 * f2  # F_p += X^T F = [R n + p x R f; R f]
            Rf1 = R10 * f0 + R11 * f1 + R12 * f2
            Rf2 = R20 * f0 + R21 * f1 + R22 * f2
            _w(pf, _RF, l, _r(pf, _RF, l) + R00 * n0 + R01 * n1 + R02 * n2 + P1 * Rf2 - P2 * Rf1)
            _w(pf, _RF + 1, l, _r(pf, _RF + 1, l) + R10 * n0 + R11 * n1 + R12 * n2 + P2 * Rf0 - P0 * Rf2)
            _w(pf, _RF + 2, l, _r(pf, _RF + 2, l) + R20 * n0 + R21 * n1 + R22 * n2 + P0 * Rf1 - P1 * Rf0)
            _w(pf, _RF + 3, l, _r(pf, _RF + 3, l) + Rf0)
            _w(pf, _RF + 4, l, _r(pf, _RF + 4, l) + Rf1)
            _w(pf, _RF + 5, l, _r(pf, _RF + 5, l) + Rf2)


# ------------------------------------------------------------------------------------------------------------
# forward dynamics


@njit(cache=True, nogil=True)
def aba_lanes(C, par, dof, g, Q, V, Tau, out, Wk, T, ctl, helpers, fn):
    """Accelerations of every state (Q, V, Tau (B, n)) into ``out`` (B, n); a joint that moves no mass gives
    non-finite rows (the caller checks).  ``Wk`` (chunks, :func:`aba_work_size`); threads as :func:`rnea_lanes`
    (``fn``: the address of :data:`ABA_LANES_CHUNK`)."""
    _lanes_table(C, par, dof, g, Q, V, Tau, out, Wk, T)
    pool_run(ctl, fn, T.ctypes.data, Wk.shape[0], helpers)


@chunk_function
def ABA_LANES_CHUNK(ctx, c):
    """Chunk c of :func:`aba_lanes`."""
    _aba_chunk(*_lanes_args(ctx, c))


def aba_work_size(nb: int, n: int) -> int:
    """Workspace of one chunk of :func:`aba_lanes`."""
    return (nb + 1) * ABA_ROWS * LB + (n + 1) * _IN * LB


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _aba_chunk(C, par, dof, g, Q, V, T, out, W, b0, b1):
    C, par, dof, g, Q, V, T, out, W = (borrowed(C), borrowed(par), borrowed(dof), borrowed(g), borrowed(Q),
                                       borrowed(V), borrowed(T), borrowed(out), borrowed(W))
    nb = C.shape[0]
    n = Q.shape[1]
    rec = ABA_ROWS * LB
    WB = W[:(nb + 1) * rec].reshape((nb + 1, ABA_ROWS, LB))
    IN = W[(nb + 1) * rec:(nb + 1) * rec + (n + 1) * _IN * LB].reshape((n + 1, _IN, LB))
    IN[:] = 0.0
    for blk in range(b0, b1):
        k0 = blk * LB
        L = min(LB, Q.shape[0] - k0)
        _load(Q, V, T, IN, k0, L)
        _aba_forward(C, par, dof, IN, WB, L)
        _aba_backward(C, par, dof, IN, WB, L)
        _aba_accelerations(C, par, dof, g, IN, WB, L)
        for a in range(n):
            x = IN[a].ravel()
            for l in range(L):
                out[k0 + l, a] = _r(x, 5, U64(l))


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _aba_forward(C, par, dof, IN, WB, L):
    """World frames, S, articulated inertias initialised to the body's, velocities, c and pA (as
    :func:`redmax.dynamics._world_pass.world_pass` and the first pass of :func:`redmax.dynamics.aba.hybrid_into`)."""
    nb = C.shape[0]
    base = WB[nb].ravel()
    for l in range(U64(L)):  # the base: R = 1, p = 0, v = 0
        for k in range(9):
            _w(base, _AR + k, l, 1.0 if k % 4 == 0 else 0.0)
        for k in range(3):
            _w(base, _AP + k, l, 0.0)
        for k in range(6):
            _w(base, _AVV + k, l, 0.0)
    for i in range(nb):
        c = C[i]
        K00, K01, K02, K03, K04, K05, K06, K07, K08 = c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
        L00, L01, L02, L03, L04, L05, L06, L07, L08 = c[9], c[10], c[11], c[12], c[13], c[14], c[15], c[16], c[17]
        N00, N01, N02, N03, N04, N05, N06, N07, N08 = c[18], c[19], c[20], c[21], c[22], c[23], c[24], c[25], c[26]
        p00, p01, p02, pa0, pa1, pa2 = c[27], c[28], c[29], c[30], c[31], c[32]
        sa0, sa1, sa2, sl0, sl1, sl2 = c[33], c[34], c[35], c[36], c[37], c[38]
        m, kc0, kc1, kc2 = c[49], c[50], c[51], c[52]
        J00, J01, J02, J11, J12, J22 = c[53], c[54], c[55], c[56], c[57], c[58]
        d = dof[i]
        x = IN[d].ravel()
        pv = WB[par[i]].ravel()
        ov = WB[i].ravel()
        for l in range(U64(L)):
            co = _r(x, 3, l)
            si = _r(x, 4, l)
            qq = _r(x, 0, l)
            B00 = K00 + co * L00 + si * N00  # the joint frame in its parent's
            B01 = K01 + co * L01 + si * N01
            B02 = K02 + co * L02 + si * N02
            B10 = K03 + co * L03 + si * N03
            B11 = K04 + co * L04 + si * N04
            B12 = K05 + co * L05 + si * N05
            B20 = K06 + co * L06 + si * N06
            B21 = K07 + co * L07 + si * N07
            B22 = K08 + co * L08 + si * N08
            b0 = p00 + qq * pa0
            b1 = p01 + qq * pa1
            b2 = p02 + qq * pa2
            A00, A01, A02 = _r(pv, _AR, l), _r(pv, _AR + 1, l), _r(pv, _AR + 2, l)
            A10, A11, A12 = _r(pv, _AR + 3, l), _r(pv, _AR + 4, l), _r(pv, _AR + 5, l)
            A20, A21, A22 = _r(pv, _AR + 6, l), _r(pv, _AR + 7, l), _r(pv, _AR + 8, l)
            R00 = A00 * B00 + A01 * B10 + A02 * B20  # E_wj = E_wp E_pj
            R01 = A00 * B01 + A01 * B11 + A02 * B21
            R02 = A00 * B02 + A01 * B12 + A02 * B22
            R10 = A10 * B00 + A11 * B10 + A12 * B20
            R11 = A10 * B01 + A11 * B11 + A12 * B21
            R12 = A10 * B02 + A11 * B12 + A12 * B22
            R20 = A20 * B00 + A21 * B10 + A22 * B20
            R21 = A20 * B01 + A21 * B11 + A22 * B21
            R22 = A20 * B02 + A21 * B12 + A22 * B22
            P0 = A00 * b0 + A01 * b1 + A02 * b2 + _r(pv, _AP, l)
            P1 = A10 * b0 + A11 * b1 + A12 * b2 + _r(pv, _AP + 1, l)
            P2 = A20 * b0 + A21 * b1 + A22 * b2 + _r(pv, _AP + 2, l)
            w0 = R00 * sa0 + R01 * sa1 + R02 * sa2  # S in the world: [R s_w; p x R s_w + R s_v]
            w1 = R10 * sa0 + R11 * sa1 + R12 * sa2
            w2 = R20 * sa0 + R21 * sa1 + R22 * sa2
            S0, S1, S2 = w0, w1, w2
            S3 = R00 * sl0 + R01 * sl1 + R02 * sl2 + P1 * w2 - P2 * w1
            S4 = R10 * sl0 + R11 * sl1 + R12 * sl2 + P2 * w0 - P0 * w2
            S5 = R20 * sl0 + R21 * sl1 + R22 * sl2 + P0 * w1 - P1 * w0
            # compact inertia about the world origin: c_w = R c + p, I = R Ic R^T + m (|c_w|^2 1 - c_w c_w^T)
            c0 = R00 * kc0 + R01 * kc1 + R02 * kc2 + P0
            c1 = R10 * kc0 + R11 * kc1 + R12 * kc2 + P1
            c2 = R20 * kc0 + R21 * kc1 + R22 * kc2 + P2
            t00 = J00 * R00 + J01 * R01 + J02 * R02
            t01 = J00 * R10 + J01 * R11 + J02 * R12
            t02 = J00 * R20 + J01 * R21 + J02 * R22
            t10 = J01 * R00 + J11 * R01 + J12 * R02
            t11 = J01 * R10 + J11 * R11 + J12 * R12
            t12 = J01 * R20 + J11 * R21 + J12 * R22
            t20 = J02 * R00 + J12 * R01 + J22 * R02
            t21 = J02 * R10 + J12 * R11 + J22 * R12
            t22 = J02 * R20 + J12 * R21 + J22 * R22
            cn = c0 * c0 + c1 * c1 + c2 * c2
            h0, h1, h2 = m * c0, m * c1, m * c2
            I00 = R00 * t00 + R01 * t10 + R02 * t20 + m * (cn - c0 * c0)
            I01 = R00 * t01 + R01 * t11 + R02 * t21 - m * c0 * c1
            I02 = R00 * t02 + R01 * t12 + R02 * t22 - m * c0 * c2
            I11 = R10 * t01 + R11 * t11 + R12 * t21 + m * (cn - c1 * c1)
            I12 = R10 * t02 + R11 * t12 + R12 * t22 - m * c1 * c2
            I22 = R20 * t02 + R21 * t12 + R22 * t22 + m * (cn - c2 * c2)
            vd = _r(x, 1, l)  # v = v_p + S qd, c = v x (S qd)
            e0, e1, e2, e3, e4, e5 = S0 * vd, S1 * vd, S2 * vd, S3 * vd, S4 * vd, S5 * vd
            v0 = _r(pv, _AVV, l) + e0
            v1 = _r(pv, _AVV + 1, l) + e1
            v2 = _r(pv, _AVV + 2, l) + e2
            v3 = _r(pv, _AVV + 3, l) + e3
            v4 = _r(pv, _AVV + 4, l) + e4
            v5 = _r(pv, _AVV + 5, l) + e5
            # I v = [I w + h x u; m u - h x w], pA = [w x k + u x l; w x l]
            k0 = I00 * v0 + I01 * v1 + I02 * v2 + h1 * v5 - h2 * v4
            k1 = I01 * v0 + I11 * v1 + I12 * v2 + h2 * v3 - h0 * v5
            k2 = I02 * v0 + I12 * v1 + I22 * v2 + h0 * v4 - h1 * v3
            l0 = m * v3 - (h1 * v2 - h2 * v1)
            l1 = m * v4 - (h2 * v0 - h0 * v2)
            l2 = m * v5 - (h0 * v1 - h1 * v0)
            _w(ov, _AR, l, R00)
            _w(ov, _AR + 1, l, R01)
            _w(ov, _AR + 2, l, R02)
            _w(ov, _AR + 3, l, R10)
            _w(ov, _AR + 4, l, R11)
            _w(ov, _AR + 5, l, R12)
            _w(ov, _AR + 6, l, R20)
            _w(ov, _AR + 7, l, R21)
            _w(ov, _AR + 8, l, R22)
            _w(ov, _AP, l, P0)
            _w(ov, _AP + 1, l, P1)
            _w(ov, _AP + 2, l, P2)
            _w(ov, _AS, l, S0)
            _w(ov, _AS + 1, l, S1)
            _w(ov, _AS + 2, l, S2)
            _w(ov, _AS + 3, l, S3)
            _w(ov, _AS + 4, l, S4)
            _w(ov, _AS + 5, l, S5)
            # Ia = the body's 6x6 inertia, packed upper triangle (see redmax._kernels.sym6)
            _w(ov, _AI, l, I00)
            _w(ov, _AI + 1, l, I01)
            _w(ov, _AI + 2, l, I02)
            _w(ov, _AI + 3, l, 0.0)
            _w(ov, _AI + 4, l, -h2)
            _w(ov, _AI + 5, l, h1)
            _w(ov, _AI + 6, l, I11)
            _w(ov, _AI + 7, l, I12)
            _w(ov, _AI + 8, l, h2)
            _w(ov, _AI + 9, l, 0.0)
            _w(ov, _AI + 10, l, -h0)
            _w(ov, _AI + 11, l, I22)
            _w(ov, _AI + 12, l, -h1)
            _w(ov, _AI + 13, l, h0)
            _w(ov, _AI + 14, l, 0.0)
            _w(ov, _AI + 15, l, m)
            _w(ov, _AI + 16, l, 0.0)
            _w(ov, _AI + 17, l, 0.0)
            _w(ov, _AI + 18, l, m)
            _w(ov, _AI + 19, l, 0.0)
            _w(ov, _AI + 20, l, m)
            _w(ov, _AB, l, v1 * k2 - v2 * k1 + v4 * l2 - v5 * l1)
            _w(ov, _AB + 1, l, v2 * k0 - v0 * k2 + v5 * l0 - v3 * l2)
            _w(ov, _AB + 2, l, v0 * k1 - v1 * k0 + v3 * l1 - v4 * l0)
            _w(ov, _AB + 3, l, v1 * l2 - v2 * l1)
            _w(ov, _AB + 4, l, v2 * l0 - v0 * l2)
            _w(ov, _AB + 5, l, v0 * l1 - v1 * l0)
            _w(ov, _AVV, l, v0)
            _w(ov, _AVV + 1, l, v1)
            _w(ov, _AVV + 2, l, v2)
            _w(ov, _AVV + 3, l, v3)
            _w(ov, _AVV + 4, l, v4)
            _w(ov, _AVV + 5, l, v5)
            _w(ov, _AC, l, v1 * e2 - v2 * e1)
            _w(ov, _AC + 1, l, v2 * e0 - v0 * e2)
            _w(ov, _AC + 2, l, v0 * e1 - v1 * e0)
            _w(ov, _AC + 3, l, v4 * e2 - v5 * e1 + v1 * e5 - v2 * e4)
            _w(ov, _AC + 4, l, v5 * e0 - v3 * e2 + v2 * e3 - v0 * e5)
            _w(ov, _AC + 5, l, v3 * e1 - v4 * e0 + v0 * e4 - v1 * e3)


@njit(inline="always")
def _packed(ov, l):
    """The 21 entries of a packed articulated inertia (upper triangle, row by row), lane l."""
    return (_r(ov, _AI, l), _r(ov, _AI + 1, l), _r(ov, _AI + 2, l), _r(ov, _AI + 3, l), _r(ov, _AI + 4, l),
            _r(ov, _AI + 5, l), _r(ov, _AI + 6, l), _r(ov, _AI + 7, l), _r(ov, _AI + 8, l), _r(ov, _AI + 9, l),
            _r(ov, _AI + 10, l), _r(ov, _AI + 11, l), _r(ov, _AI + 12, l), _r(ov, _AI + 13, l), _r(ov, _AI + 14, l),
            _r(ov, _AI + 15, l), _r(ov, _AI + 16, l), _r(ov, _AI + 17, l), _r(ov, _AI + 18, l), _r(ov, _AI + 19, l),
            _r(ov, _AI + 20, l))


@njit(inline="always")
def _six(ov, row, l):
    return (_r(ov, row, l), _r(ov, row + 1, l), _r(ov, row + 2, l), _r(ov, row + 3, l), _r(ov, row + 4, l),
            _r(ov, row + 5, l))


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _aba_backward(C, par, dof, IN, WB, L):
    """Articulated inertias and biases, leaves to root (``articulated_one`` of :mod:`redmax.dynamics.aba`; a
    fixed joint passes its inertia and bias on whole: ``D^-1`` is set to 0 there).  Three lane loops per body
    (U, D^-1, u; the parent's bias; the parent's inertia): each touches few enough rows for the vectoriser's
    overlap checks."""
    nb = C.shape[0]
    for i in range(nb - 1, -1, -1):
        one = C[i, _ONE]
        arm = C[i, _ARM] + (1.0 - one)  # D of a fixed joint: 1 (its D^-1 is multiplied by one = 0)
        ov = WB[i].ravel()
        pv = WB[par[i]].ravel()
        x = IN[dof[i]].ravel()
        for l in range(U64(L)):
            P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17, P18, P19, P20 = (
                _packed(ov, l))
            s0, s1, s2, s3, s4, s5 = _six(ov, _AS, l)
            c0, c1, c2, c3, c4, c5 = _six(ov, _AC, l)
            b0, b1, b2, b3, b4, b5 = _six(ov, _AB, l)
            U0 = P0 * s0 + P1 * s1 + P2 * s2 + P3 * s3 + P4 * s4 + P5 * s5
            U1 = P1 * s0 + P6 * s1 + P7 * s2 + P8 * s3 + P9 * s4 + P10 * s5
            U2 = P2 * s0 + P7 * s1 + P11 * s2 + P12 * s3 + P13 * s4 + P14 * s5
            U3 = P3 * s0 + P8 * s1 + P12 * s2 + P15 * s3 + P16 * s4 + P17 * s5
            U4 = P4 * s0 + P9 * s1 + P13 * s2 + P16 * s3 + P18 * s4 + P19 * s5
            U5 = P5 * s0 + P10 * s1 + P14 * s2 + P17 * s3 + P19 * s4 + P20 * s5
            _w(ov, _AU, l, U0)
            _w(ov, _AU + 1, l, U1)
            _w(ov, _AU + 2, l, U2)
            _w(ov, _AU + 3, l, U3)
            _w(ov, _AU + 4, l, U4)
            _w(ov, _AU + 5, l, U5)
            _w(ov, _AD, l, one / (s0 * U0 + s1 * U1 + s2 * U2 + s3 * U3 + s4 * U4 + s5 * U5 + arm))
            _w(ov, _AUU, l, _r(x, 2, l) - (U0 * c0 + U1 * c1 + U2 * c2 + U3 * c3 + U4 * c4 + U5 * c5) - (
                s0 * b0 + s1 * b1 + s2 * b2 + s3 * b3 + s4 * b4 + s5 * b5))
        for l in range(U64(L)):  # pA_p += pA + Ia c + U D^-1 u
            P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17, P18, P19, P20 = (
                _packed(ov, l))
            c0, c1, c2, c3, c4, c5 = _six(ov, _AC, l)
            U0, U1, U2, U3, U4, U5 = _six(ov, _AU, l)
            wq = _r(ov, _AD, l) * _r(ov, _AUU, l)
            _w(pv, _AB, l, _r(pv, _AB, l) + _r(ov, _AB, l) + P0 * c0 + P1 * c1 + P2 * c2 + P3 * c3 + P4 * c4
               + P5 * c5 + U0 * wq)
            _w(pv, _AB + 1, l, _r(pv, _AB + 1, l) + _r(ov, _AB + 1, l) + P1 * c0 + P6 * c1 + P7 * c2 + P8 * c3
               + P9 * c4 + P10 * c5 + U1 * wq)
            _w(pv, _AB + 2, l, _r(pv, _AB + 2, l) + _r(ov, _AB + 2, l) + P2 * c0 + P7 * c1 + P11 * c2 + P12 * c3
               + P13 * c4 + P14 * c5 + U2 * wq)
            _w(pv, _AB + 3, l, _r(pv, _AB + 3, l) + _r(ov, _AB + 3, l) + P3 * c0 + P8 * c1 + P12 * c2 + P15 * c3
               + P16 * c4 + P17 * c5 + U3 * wq)
            _w(pv, _AB + 4, l, _r(pv, _AB + 4, l) + _r(ov, _AB + 4, l) + P4 * c0 + P9 * c1 + P13 * c2 + P16 * c3
               + P18 * c4 + P19 * c5 + U4 * wq)
            _w(pv, _AB + 5, l, _r(pv, _AB + 5, l) + _r(ov, _AB + 5, l) + P5 * c0 + P10 * c1 + P14 * c2 + P17 * c3
               + P19 * c4 + P20 * c5 + U5 * wq)
        for l in range(U64(L)):  # Ia_p += Ia - U D^-1 U^T
            Di = _r(ov, _AD, l)
            U0, U1, U2, U3, U4, U5 = _six(ov, _AU, l)
            V0, V1, V2, V3, V4, V5 = Di * U0, Di * U1, Di * U2, Di * U3, Di * U4, Di * U5
            _w(pv, _AI, l, _r(pv, _AI, l) + _r(ov, _AI, l) - V0 * U0)
            _w(pv, _AI + 1, l, _r(pv, _AI + 1, l) + _r(ov, _AI + 1, l) - V0 * U1)
            _w(pv, _AI + 2, l, _r(pv, _AI + 2, l) + _r(ov, _AI + 2, l) - V0 * U2)
            _w(pv, _AI + 3, l, _r(pv, _AI + 3, l) + _r(ov, _AI + 3, l) - V0 * U3)
            _w(pv, _AI + 4, l, _r(pv, _AI + 4, l) + _r(ov, _AI + 4, l) - V0 * U4)
            _w(pv, _AI + 5, l, _r(pv, _AI + 5, l) + _r(ov, _AI + 5, l) - V0 * U5)
            _w(pv, _AI + 6, l, _r(pv, _AI + 6, l) + _r(ov, _AI + 6, l) - V1 * U1)
            _w(pv, _AI + 7, l, _r(pv, _AI + 7, l) + _r(ov, _AI + 7, l) - V1 * U2)
            _w(pv, _AI + 8, l, _r(pv, _AI + 8, l) + _r(ov, _AI + 8, l) - V1 * U3)
            _w(pv, _AI + 9, l, _r(pv, _AI + 9, l) + _r(ov, _AI + 9, l) - V1 * U4)
            _w(pv, _AI + 10, l, _r(pv, _AI + 10, l) + _r(ov, _AI + 10, l) - V1 * U5)
            _w(pv, _AI + 11, l, _r(pv, _AI + 11, l) + _r(ov, _AI + 11, l) - V2 * U2)
            _w(pv, _AI + 12, l, _r(pv, _AI + 12, l) + _r(ov, _AI + 12, l) - V2 * U3)
            _w(pv, _AI + 13, l, _r(pv, _AI + 13, l) + _r(ov, _AI + 13, l) - V2 * U4)
            _w(pv, _AI + 14, l, _r(pv, _AI + 14, l) + _r(ov, _AI + 14, l) - V2 * U5)
            _w(pv, _AI + 15, l, _r(pv, _AI + 15, l) + _r(ov, _AI + 15, l) - V3 * U3)
            _w(pv, _AI + 16, l, _r(pv, _AI + 16, l) + _r(ov, _AI + 16, l) - V3 * U4)
            _w(pv, _AI + 17, l, _r(pv, _AI + 17, l) + _r(ov, _AI + 17, l) - V3 * U5)
            _w(pv, _AI + 18, l, _r(pv, _AI + 18, l) + _r(ov, _AI + 18, l) - V4 * U4)
            _w(pv, _AI + 19, l, _r(pv, _AI + 19, l) + _r(ov, _AI + 19, l) - V4 * U5)
            _w(pv, _AI + 20, l, _r(pv, _AI + 20, l) + _r(ov, _AI + 20, l) - V5 * U5)


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _aba_accelerations(C, par, dof, g, IN, WB, L):
    """Root to leaves: ``qdd = D^-1 (u - U^T a_p)``, ``a = a_p + c + S qdd`` from ``a_0 = [0; -g]``."""
    nb = C.shape[0]
    base = WB[nb].ravel()
    for l in range(U64(L)):
        _w(base, _AACC, l, 0.0)
        _w(base, _AACC + 1, l, 0.0)
        _w(base, _AACC + 2, l, 0.0)
        _w(base, _AACC + 3, l, -g[0])
        _w(base, _AACC + 4, l, -g[1])
        _w(base, _AACC + 5, l, -g[2])
    for i in range(nb):
        ov = WB[i].ravel()
        pv = WB[par[i]].ravel()
        x = IN[dof[i]].ravel()
        for l in range(U64(L)):
            g0, g1, g2 = _r(pv, _AACC, l), _r(pv, _AACC + 1, l), _r(pv, _AACC + 2, l)
            g3, g4, g5 = _r(pv, _AACC + 3, l), _r(pv, _AACC + 4, l), _r(pv, _AACC + 5, l)
            a = _r(ov, _AD, l) * (_r(ov, _AUU, l) - (_r(ov, _AU, l) * g0 + _r(ov, _AU + 1, l) * g1
                                                     + _r(ov, _AU + 2, l) * g2 + _r(ov, _AU + 3, l) * g3
                                                     + _r(ov, _AU + 4, l) * g4 + _r(ov, _AU + 5, l) * g5))
            _w(x, 5, l, a)
            _w(ov, _AACC, l, g0 + _r(ov, _AC, l) + _r(ov, _AS, l) * a)
            _w(ov, _AACC + 1, l, g1 + _r(ov, _AC + 1, l) + _r(ov, _AS + 1, l) * a)
            _w(ov, _AACC + 2, l, g2 + _r(ov, _AC + 2, l) + _r(ov, _AS + 2, l) * a)
            _w(ov, _AACC + 3, l, g3 + _r(ov, _AC + 3, l) + _r(ov, _AS + 3, l) * a)
            _w(ov, _AACC + 4, l, g4 + _r(ov, _AC + 4, l) + _r(ov, _AS + 4, l) * a)
            _w(ov, _AACC + 5, l, g5 + _r(ov, _AC + 5, l) + _r(ov, _AS + 5, l) * a)
