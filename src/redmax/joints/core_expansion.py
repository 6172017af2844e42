"""The core expansion of every joint kind (Singh, Russell & Wensing, §II: Lie-subgroup joints).

Every joint is written as a chain of *core joints* whose motion subspace is constant in their own frame: screws
(1 DOF), planar and translational joints (2 and 3 DOFs), spherical joints (3 DOFs, ``S = [1; 0]``) and free joints
(6 DOFs, ``S = 1_6``), separated by massless frames, with core rates ``nu = A(q) qd`` (see
:mod:`redmax.joints.derivatives` for the list per kind).  :func:`core_layout` gives the core joints' sizes,
:func:`joint_expansion` their twists ``Sv`` (6, m) in the joint's own (child) frame and the map jets ``A``,
``dA``, ``d2A``, ``d3A`` (``S = Sv A``; Sueda notes Eq. 2.41 for composites).  Scalar-generic (complex step).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._kernels.dispatch import lean_gate
from redmax.joints.composite import _layout
from redmax.joints.primitive import COMPOSITE, primitive_calc, primitive_expand, primitive_layout
from redmax.joints.simple import TRANSLATIONAL
from redmax.joints.spherical_euler import SPHERICAL_EULER
from redmax.joints.spherical_exp import SPHERICAL_EXP, so3_jr_jets
from redmax.spatial import Ad, inv_se3

__all__ = ["MAX_CORE", "core_count", "core_groups", "core_layout", "joint_expansion", "joint_expansion_gated",
           "so3_jr_jets", "so3_jr_jets_gated"]

MAX_CORE = 96  # most core joints of one joint (a composite of 15 spline surfaces has 90)


@njit(cache=True)
def _is_free(p):
    """True for a composite of a translational and a spherical joint (Free3D)."""
    code = _layout(p)[0]
    return (code.shape[0] == 2 and code[0] == TRANSLATIONAL
            and (code[1] == SPHERICAL_EXP or code[1] == SPHERICAL_EULER))


@njit(cache=True)
def core_layout(code, p, js, tangent, sizes):
    """Sizes of the core joints of a joint, in order, into ``sizes`` (MAX_CORE,).

    Returns ``(count, trivial)``: ``trivial`` is True when ``A`` is the identity (core rates = the joint's
    rates, and no dA).
    """
    if code == COMPOSITE:
        if tangent and _is_free(p):
            sizes[0] = 6
            return 1, True
        sub = _layout(p)[0]
        o = 0
        triv = True
        for k in range(sub.shape[0]):
            o, t = primitive_layout(sub[k], (js >> (4 * k)) & 15, tangent, sizes, o)
            triv = triv and t
        return o, triv
    return primitive_layout(code, js, tangent, sizes, 0)


@njit(cache=True)
def joint_expansion(code, p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Core expansion of one joint at q: ``Sv`` (6, m), ``A`` (m, n) and its first ``jets`` (0..3) derivatives
    ``dA`` (m, n, n), ``d2A`` (m, n, n, n), ``d3A`` (m, n, n, n, n); outputs zero on entry (the unused ones may
    be empty), m from :func:`core_layout`."""
    if code != COMPOSITE:
        primitive_expand(code, p, q, js, tangent, jets, Sv, A, dA, d2A, d3A)
        return
    dt = q.dtype
    if tangent and _is_free(p):
        for k in range(6):
            Sv[k, k] = 1.0
            A[k, k] = 1.0
        return
    sub, nq, poff, plen, qoff = _layout(p)
    ns = sub.shape[0]
    sizes = np.zeros(MAX_CORE, dtype=np.int64)
    moff = np.zeros(ns + 1, dtype=np.int64)
    Qs = np.zeros((ns, 4, 4), dtype=dt)
    for k in range(ns):
        sjs = (js >> (4 * k)) & 15
        o, _ = primitive_layout(sub[k], sjs, tangent, sizes, 0)
        mk = 0
        for c in range(o):
            mk += sizes[c]
        moff[k + 1] = moff[k] + mk
        a = qoff[k]
        b = a + nq[k]
        pk = p[poff[k]:poff[k] + plen[k]]
        Qk = np.zeros((4, 4), dtype=dt)
        St = np.zeros((6, nq[k]), dtype=dt)
        Sd = np.zeros((6, nq[k]), dtype=dt)
        qk = q[a:b]
        primitive_calc(sub[k], pk, qk, qk, sjs, Qk, St, Sd)
        Qs[k] = Qk
        m0 = moff[k]
        m1 = moff[k + 1]
        primitive_expand(sub[k], pk, qk, sjs, tangent, jets, Sv[:, m0:m1], A[m0:m1, a:b], dA[m0:m1, a:b, a:b],
                     d2A[m0:m1, a:b, a:b, a:b], d3A[m0:m1, a:b, a:b, a:b, a:b])
    # move every sub-joint's twists to the final frame: Ad(P_k^-1), P_k = Q_{k+1} ... Q_m
    Acc = np.eye(6, dtype=dt)
    for k in range(ns - 1, -1, -1):
        m0 = moff[k]
        m1 = moff[k + 1]
        if k < ns - 1:
            for c in range(m0, m1):
                x = np.ascontiguousarray(Sv[:, c])
                Sv[:, c] = Acc @ x
        if k > 0:
            Acc = Acc @ Ad(inv_se3(np.ascontiguousarray(Qs[k])))


@njit(cache=True)
def core_groups(code, p, js, tangent, grp):
    """grp[c] = index of the core joint of core DOF c (grp (m,)); returns m."""
    sizes = np.zeros(MAX_CORE, dtype=np.int64)
    nc, _ = core_layout(code, p, js, tangent, sizes)
    c = 0
    for g in range(nc):
        for _ in range(sizes[g]):
            grp[c] = g
            c += 1
    return c


@njit(cache=True)
def core_count(code, p, js, tangent):
    """Number of core DOFs m of a joint."""
    sizes = np.zeros(MAX_CORE, dtype=np.int64)
    nc, _ = core_layout(code, p, js, tangent, sizes)
    m = 0
    for g in range(nc):
        m += sizes[g]
    return m


# for kernels that take the packed ints first: compiled only for models with these joint families (lean_gate)
joint_expansion_gated = lean_gate(joint_expansion, "joint_expansion_gated", prepend=True)
so3_jr_jets_gated = lean_gate(so3_jr_jets, "so3_jr_jets_gated", prepend=True)
