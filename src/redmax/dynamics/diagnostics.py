"""Diagnostics of the joint-space inertia: which joint moves no mass, which DOF repeats the motion of others."""

from __future__ import annotations

import numpy as np

from redmax.dynamics.crba import crba_kernel

__all__ = ["dependent_dof", "singular_inertia_message"]


def dependent_dof(M: np.ndarray, rel_tol: float = 1e-10) -> tuple[int, float]:
    """First DOF k whose direction depends (nearly) on those before it in the metric of M, and its relative
    pivot: the Cholesky pivots of ``D^-1/2 M D^-1/2`` (D = diag M) are ``sin^2`` of the angle between DOF k
    and the span of DOFs 0..k-1, 1 for orthogonal DOFs and ~0 for dependent ones (independent of units and
    of how light a body is).  Returns (-1, min pivot) when every pivot exceeds ``rel_tol``."""
    d = np.sqrt(np.diag(M))
    A = M / d[:, None] / d[None, :]
    n = A.shape[0]
    L = np.zeros_like(A)
    piv_min = 1.0
    for k in range(n):  # column Cholesky, stopping at the first small pivot
        p = A[k, k] - L[k, :k] @ L[k, :k]
        if not p > rel_tol:
            return k, float(p)
        piv_min = min(piv_min, float(p))
        L[k, k] = np.sqrt(p)
        L[k + 1 :, k] = (A[k + 1 :, k] - L[k + 1 :, :k] @ L[k, :k]) / L[k, k]
    return -1, piv_min


def singular_inertia_message(model, q, jstate=None) -> str:
    """Why M(q) is singular: the joint that moves no mass, or whose DOF depends on earlier ones; or, when M(q)
    itself is not finite, the first DOF whose row overflowed."""
    Ii, Ff = model.packed
    js = model.jstate0
    if jstate is not None:
        js = np.ascontiguousarray(jstate, dtype=np.int64).view()
        js.flags.writeable = False  # as jstate0: one compiled crba_kernel, not one more per read-only flag
    with np.errstate(over="ignore", invalid="ignore"):
        M = crba_kernel(Ii, Ff, np.array(np.real(q), dtype=float), js)
    if not np.all(np.isfinite(M)):  # overflow (huge placements, axes or q), not a massless joint
        k = int(np.flatnonzero(~np.all(np.isfinite(M), axis=1))[0])
        i = int(np.searchsorted(model.idx, k, side="right") - 1)
        return (f"joint '{model.joint_names[i]}': the joint-space inertia about DOF '{model.dof_names[k]}' is not "
                "finite although every input is (the inputs are too large: overflow; check the placements, axes and "
                "q)")
    d = np.diag(M)
    tol = 1e-12 * max(1.0, float(np.abs(d).max(initial=0.0)))
    for k in range(model.ndof):
        if not d[k] > tol:
            i = int(np.searchsorted(model.idx, k, side="right") - 1)
            return (f"joint '{model.joint_names[i]}': moves no mass (the bodies it carries have no inertia about "
                    f"DOF '{model.dof_names[k]}')")
    k, p = dependent_dof(M)
    if k < 0:
        return f"model '{model.name}': the joint-space inertia is regular here (smallest relative pivot {p:.1e})"
    i = int(np.searchsorted(model.idx, k, side="right") - 1)
    return (f"joint '{model.joint_names[i]}': DOF '{model.dof_names[k]}' is dependent on the DOFs before it "
            f"(relative pivot {p:.1e}): the joint-space inertia is singular in this configuration")
