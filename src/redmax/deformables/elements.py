"""Tetrahedral finite elements: shape-function gradients, element energy, forces and stiffness, lumped masses.

Two isoparametric elements, generic over quadrature points:

* ``tet4``: linear tetrahedron, corners 0..3, shape functions ``N_a = L_a`` (barycentric coordinates), one
  quadrature point (the centroid).
* ``tet10``: quadratic tetrahedron, corners 0..3 then the edge midpoints of the edges (0, 1), (1, 2), (0, 2),
  (0, 3), (1, 3), (2, 3) at nodes 4..9 (the order of VTK and meshio); ``N_a = L_a (2 L_a - 1)`` at a corner,
  ``N_ab = 4 L_a L_b`` at the midpoint of edge (a, b); the 4-point degree-2 rule (barycentric permutations of
  ``((5 + 3 sqrt 5)/20, (5 - sqrt 5)/20 x 3)``, equal weights).

With reference coordinates ``xi = (L_1, L_2, L_3)`` (reference volume 1/6), the rest Jacobian is
``J = dX/dxi = sum_a X_a (x) dN_a/dxi`` and the material gradients ``dN_a/dX = J^{-T} dN_a/dxi``.  At a
quadrature point the deformation gradient is ``F = sum_a x_a (x) dN_a/dX`` and the element energy is
``E = sum_q w_q psi(F_q)`` with ``w_q`` the reference weight times ``det J`` (so ``sum_q w_q`` is the rest
volume of a straight-sided element).  Nodal forces and their derivative (the negative Hessian)::

    f_a,i = -dE/dx_a,i = -sum_q w_q P_ij dN_a/dX_j
    K_ab,ik = df_a,i/dx_b,k = -sum_q w_q dN_a/dX_j A_ijkl dN_b/dX_l       (A = dP/dF, materials.py)

Units: positions in m, ``mu``/``lam`` in Pa, energy in J, forces in N, K in N/m (any consistent system).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse

from redmax._jit import njit
from redmax.deformables.materials import CODE_COROTATED, CODE_NEOHOOKEAN, _evaluate
from redmax.errors import ModelError

__all__ = ["EDGES", "ELEMENTS", "elastic_forces", "element_terms", "lumped_masses", "precompute",
           "shape_gradients"]

ELEMENTS = {"tet4": 4, "tet10": 10}  # element name -> nodes per element
EDGES = np.array([[0, 1], [1, 2], [0, 2], [0, 3], [1, 3], [2, 3]])  # tet10: corner pair of mid-edge node 4 + e

_DEGENERATE = 1e-10  # det J below this times (longest corner edge)^3: a degenerate rest element
_HRZ_CORNER = 1.0 / 36.0  # tet10 lumped mass share of a corner node (HRZ: (1/70) / (18/35))
_HRZ_EDGE = 4.0 / 27.0  # ... of a mid-edge node ((8/105) / (18/35))


def _tet10_gradients(L: np.ndarray) -> np.ndarray:
    """dN_a/dxi (10, 3) of the quadratic tetrahedron at barycentric coordinates ``L`` (4,)."""
    dL = np.zeros((10, 4))  # dN_a/dL_r, then dN/dxi_r = dN/dL_r - dN/dL_0 (L_0 = 1 - xi_1 - xi_2 - xi_3)
    for a in range(4):
        dL[a, a] = 4.0 * L[a] - 1.0
    for e, (a, b) in enumerate(EDGES):
        dL[4 + e, a] = 4.0 * L[b]
        dL[4 + e, b] = 4.0 * L[a]
    return dL[:, 1:] - dL[:, :1]


def _rules() -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per element size: reference gradients dN/dxi (nq, nn, 3) and reference weights (nq,)."""
    tet4 = np.array([[[-1.0, -1.0, -1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
    a = (5.0 + 3.0 * math.sqrt(5.0)) / 20.0
    b = (5.0 - math.sqrt(5.0)) / 20.0
    points = b + (a - b) * np.eye(4)  # barycentric coordinates of the 4 points
    tet10 = np.array([_tet10_gradients(L) for L in points])
    return {4: (tet4, np.array([1.0 / 6.0])), 10: (tet10, np.full(4, 1.0 / 24.0))}


_RULES = _rules()


def _check_tets(tets, n: int, who: str) -> np.ndarray:
    """``tets`` as an (m, 4) or (m, 10) int64 array of node indices in [0, n), or ModelError naming ``who``."""
    try:
        t = np.asarray(tets)
    except (TypeError, ValueError):
        t = None
    if t is None or t.ndim != 2 or t.shape[1] not in _RULES or t.shape[0] == 0 or not (
            np.issubdtype(t.dtype, np.integer)):
        shape = getattr(t, "shape", None)
        raise ModelError(f"{who}: tets must be an (m, 4) or (m, 10) integer array with m > 0, got shape {shape}")
    if t.min() < 0 or t.max() >= n:
        raise ModelError(f"{who}: tets must hold node indices in [0, {n}), got range [{t.min()}, {t.max()}]")
    return t.astype(np.int64)


def _check_nodes(nodes, who: str) -> np.ndarray:
    """``nodes`` as a finite (n, 3) float64 array, or ModelError naming ``who``."""
    try:
        X = np.asarray(nodes, dtype=np.float64)
    except (TypeError, ValueError):
        X = None
    if X is None or X.ndim != 2 or X.shape[1] != 3:
        raise ModelError(f"{who}: nodes must be an (n, 3) array of coordinates, got shape {getattr(X, 'shape', None)}")
    if not np.all(np.isfinite(X)):
        raise ModelError(f"{who}: nodes must be finite (row {int(np.argwhere(~np.isfinite(X))[0, 0])} is not)")
    return X


def _gradients(X_el: np.ndarray, first: int = 0, who: str = "element") -> tuple[np.ndarray, np.ndarray]:
    """dN/dX (m, nq, nn, 3) and weights w (m, nq) of elements with rest positions ``X_el`` (m, nn, 3).

    Raises ModelError for a degenerate (``det J <= 1e-10 h^3``, h the longest corner edge) or inverted element,
    naming ``who`` and the element index (``first`` + position in ``X_el``).
    """
    ref, wref = _RULES[X_el.shape[1]]
    Jm = np.einsum("mai,qar->mqir", X_el, ref)  # J[i, r] = dX_i/dxi_r
    det = np.linalg.det(Jm)
    corners = X_el[:, :4]
    h = np.max(np.linalg.norm(corners[:, EDGES[:, 0]] - corners[:, EDGES[:, 1]], axis=2), axis=1)
    bad = ~(det > _DEGENERATE * (h**3)[:, None])
    if np.any(bad):
        e = int(np.argwhere(bad)[0, 0])
        d = float(det[e].min())
        kind = "inverted (negative orientation)" if d < 0.0 else "degenerate (zero volume)"
        raise ModelError(f"{who} {first + e}: rest element is {kind}: det dX/dxi = {d:.3g} with longest edge "
                         f"{h[e]:.3g}")
    Jinv = np.linalg.inv(Jm)
    dN = np.einsum("qar,mqri->mqai", ref, Jinv)  # dN_a/dX_i = dN_a/dxi_r (J^-1)_ri
    return np.ascontiguousarray(dN), det * wref


def shape_gradients(X_el, index: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Material shape-function gradients and quadrature weights of one rest element.

    ``dN[q, a] = dN_a/dX`` at quadrature point q (``dN_a/dX = J^{-T} dN_a/dxi``, ``J = sum_a X_a (x) dN_a/dxi``),
    ``w[q] = w_ref,q det J`` (``sum(w)`` = rest volume for a straight-sided element).

    Args:
        X_el: rest node positions (4, 3) (tet4) or (10, 3) (tet10; node order in the module docstring), m.
        index: element index named in error messages.

    Returns:
        ``(dN, w)``: dN (nq, nn, 3) in 1/m, w (nq,) in m^3 (nq = 1 for tet4, 4 for tet10).

    Raises:
        ModelError: for a wrong shape, non-finite positions, or a degenerate or inverted element.
    """
    who = "element" if index is None else f"element {index}"
    X = np.asarray(X_el, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] not in _RULES or X.shape[1] != 3 or not np.all(np.isfinite(X)):
        raise ModelError(f"{who}: rest positions must be a finite (4, 3) or (10, 3) array, got shape {X.shape}")
    dN, w = _gradients(X[None], 0 if index is None else int(index), "element")
    return dN[0], w[0]


def precompute(nodes, tets) -> tuple[np.ndarray, np.ndarray]:
    """Shape-function gradients and weights of every element (see :func:`shape_gradients`).

    Args:
        nodes: rest node positions (n, 3), m.
        tets: element node indices (m, 4) or (m, 10).

    Returns:
        ``(dN_all, w_all)``: (m, nq, nn, 3) in 1/m and (m, nq) in m^3.

    Raises:
        ModelError: for bad arrays or a degenerate or inverted element (named by its index).
    """
    X = _check_nodes(nodes, "precompute")
    t = _check_tets(tets, X.shape[0], "precompute")
    return _gradients(X[t], 0, "precompute: element")


def lumped_masses(nodes, tets, density: float) -> np.ndarray:
    """Diagonal (lumped) mass of every node.

    tet4: each element's mass ``rho V_e`` split equally over its 4 nodes.  tet10: HRZ lumping (the diagonal of
    the consistent mass matrix, ``int N_a^2 dV`` = V/70 at a corner and 8V/105 at a mid-edge node, scaled to the
    element mass): a corner gets ``rho V_e / 36`` and a mid-edge node ``4 rho V_e / 27``.  ``V_e = sum_q w_q``
    (quadrature of ``det J``).

    Args:
        nodes: rest node positions (n, 3), m.
        tets: element node indices (m, 4) or (m, 10).
        density: mass density rho (kg/m^3), positive.

    Returns:
        masses (n,), kg (zero at nodes of no element).
    """
    X = _check_nodes(nodes, "lumped_masses")
    t = _check_tets(tets, X.shape[0], "lumped_masses")
    rho = float(density)
    if not (math.isfinite(rho) and rho > 0.0):
        raise ModelError(f"lumped_masses: density must be positive and finite, got {density!r}")
    _, w = _gradients(X[t], 0, "lumped_masses: element")
    me = rho * w.sum(axis=1)
    if t.shape[1] == 4:
        share = np.full(4, 0.25)
    else:
        share = np.array([_HRZ_CORNER] * 4 + [_HRZ_EDGE] * 6)
    m = np.zeros(X.shape[0])
    np.add.at(m, t, me[:, None] * share[None, :])
    return m


@njit(cache=True)
def element_terms(code, mu, lam, x, dN, w, F_out, H_out, want_H):
    """Energy, nodal forces and (optionally) force Jacobian of one element.

    ``F_q = sum_a x_a (x) dN[q, a]``; ``E = sum_q w_q psi(F_q)``; ``F_out[a, i] = -sum_q w_q P_ij dN[q, a, j]``;
    ``H_out[a, b, i, k] = -sum_q w_q dN[q, a, j] A_ijkl dN[q, b, l]`` (``= dF_out[a, i]/dx_b,k``, symmetric:
    ``H[a, b, i, k] = H[b, a, k, i]``).  No validation (a kernel: callers pass consistent arrays); two small
    scratch arrays per call.  Cost (one thread, best of runs): tet4 0.5 / 0.8 us (neo-Hookean / co-rotated)
    without H, 0.9 / 1.2 us with; tet10 1.4 / 2.4 us without, 4.8 / 6.5 us with.

    Args:
        code: material code (0 co-rotated, 1 stable neo-Hookean).
        mu, lam: Lamé parameters (Pa).
        x: current node positions (nn, 3), m.
        dN: material gradients (nq, nn, 3), 1/m (:func:`shape_gradients`).
        w: quadrature weights (nq,), m^3.
        F_out: (nn, 3) output, overwritten with the nodal forces (N).
        H_out: (nn, nn, 3, 3) output, overwritten with the force Jacobian (N/m) when ``want_H``, else untouched.
        want_H: whether to compute H_out.

    Returns:
        The element energy E (J).
    """
    nq = dN.shape[0]
    nn = dN.shape[1]
    buf = np.empty((5, 3, 3, 3))  # scratch (views by leading indices stay C-contiguous; no reshape)
    A = buf[0:3]
    T = buf[3]
    F = buf[4, 0]
    P = buf[4, 1]
    work = np.empty((4, 4, 4))  # the material's
    F_out[:, :] = 0.0
    if want_H:
        H_out[:, :, :, :] = 0.0
    energy = 0.0
    for q in range(nq):
        for i in range(3):
            for j in range(3):
                s = 0.0
                for a in range(nn):
                    s += x[a, i] * dN[q, a, j]
                F[i, j] = s
        wq = w[q]
        energy += wq * _evaluate(code, mu, lam, F, P, A, want_H, work)
        for a in range(nn):
            g0 = dN[q, a, 0]
            g1 = dN[q, a, 1]
            g2 = dN[q, a, 2]
            for i in range(3):
                F_out[a, i] -= wq * (P[i, 0] * g0 + P[i, 1] * g1 + P[i, 2] * g2)
        if not want_H:
            continue
        for a in range(nn):
            g0 = wq * dN[q, a, 0]
            g1 = wq * dN[q, a, 1]
            g2 = wq * dN[q, a, 2]
            for i in range(3):  # T[i, k, l] = w_q dN_a,j A_ijkl
                for k in range(3):
                    for l in range(3):
                        T[i, k, l] = g0 * A[i, 0, k, l] + g1 * A[i, 1, k, l] + g2 * A[i, 2, k, l]
            for b in range(a, nn):  # the upper block triangle; the lower one by symmetry below
                h0 = dN[q, b, 0]
                h1 = dN[q, b, 1]
                h2 = dN[q, b, 2]
                for i in range(3):
                    for k in range(3):
                        H_out[a, b, i, k] -= T[i, k, 0] * h0 + T[i, k, 1] * h1 + T[i, k, 2] * h2
    if want_H:
        for a in range(nn):
            for b in range(a + 1, nn):
                for i in range(3):
                    for k in range(3):
                        H_out[b, a, k, i] = H_out[a, b, i, k]
    return energy


@njit(cache=True)
def _assemble(code, mu, lam, x, tets, dN_all, w_all, f, rows, cols, vals):
    """Sum :func:`element_terms` over all elements: forces into ``f`` (n, 3, zeroed here) and the K triplets
    into ``rows``, ``cols``, ``vals`` (m (3 nn)^2,: element e's block at ``e (3 nn)^2``, row-major over
    ``(a, i, b, k)``).  Returns the total energy."""
    m, nn = tets.shape
    xe = np.empty((nn, 3))
    fe = np.empty((nn, 3))
    He = np.empty((nn, nn, 3, 3))
    f[:, :] = 0.0
    energy = 0.0
    p = 0
    for e in range(m):
        for a in range(nn):
            for i in range(3):
                xe[a, i] = x[tets[e, a], i]
        energy += element_terms(code, mu, lam, xe, dN_all[e], w_all[e], fe, He, True)
        for a in range(nn):
            na = tets[e, a]
            for i in range(3):
                f[na, i] += fe[a, i]
                for b in range(nn):
                    nb = tets[e, b]
                    for k in range(3):
                        rows[p] = 3 * na + i
                        cols[p] = 3 * nb + k
                        vals[p] = He[a, b, i, k]
                        p += 1
    return energy


def elastic_forces(code: int, mu: float, lam: float, x, tets, dN_all, w_all):
    """Elastic energy, nodal forces and the sparse force Jacobian of a whole mesh (statics, tests).

    ``E = sum_e E_e``, ``f = -dE/dx``, ``K = df/dx`` assembled from :func:`element_terms` (``K`` is symmetric and
    negative semi-definite near the rest state).

    Args:
        code: material code (0 co-rotated, 1 stable neo-Hookean).
        mu, lam: Lamé parameters (Pa).
        x: current node positions (n, 3), m.
        tets: element node indices (m, nn).
        dN_all, w_all: (m, nq, nn, 3) and (m, nq) from :func:`precompute`.

    Returns:
        ``(energy, f, K)``: energy (J), f (n, 3) (N), K ``scipy.sparse.csr_matrix`` (3n, 3n) (N/m), rows and
        columns ordered ``3 node + axis``.
    """
    if code not in (CODE_COROTATED, CODE_NEOHOOKEAN):
        raise ModelError(f"elastic_forces: code must be {CODE_COROTATED} (co-rotated) or {CODE_NEOHOOKEAN} "
                         f"(neo-Hookean), got {code!r}")
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ModelError(f"elastic_forces: x must be an (n, 3) array of positions, got shape {x.shape}")
    t = _check_tets(tets, x.shape[0], "elastic_forces")
    dN_all = np.ascontiguousarray(dN_all, dtype=np.float64)
    w_all = np.ascontiguousarray(w_all, dtype=np.float64)
    if w_all.ndim != 2 or dN_all.shape != (t.shape[0], w_all.shape[1], t.shape[1], 3) or (
            w_all.shape[0] != t.shape[0]):
        raise ModelError(f"elastic_forces: dN_all {dN_all.shape} and w_all {w_all.shape} do not match tets "
                         f"{t.shape} (use precompute(nodes, tets))")
    n = x.shape[0]
    nt = t.shape[0] * (3 * t.shape[1]) ** 2
    rows = np.empty(nt, dtype=np.int64)
    cols = np.empty(nt, dtype=np.int64)
    vals = np.empty(nt)
    f = np.empty((n, 3))
    energy = _assemble(int(code), float(mu), float(lam), x, t, dN_all, w_all, f, rows, cols, vals)
    K = scipy.sparse.coo_matrix((vals, (rows, cols)), shape=(3 * n, 3 * n)).tocsr()
    return float(energy), f, K
