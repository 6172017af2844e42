"""Hyperelastic materials of the deformable bodies: energy density, first Piola-Kirchhoff stress and its derivative.

Every law is a function of the deformation gradient ``F = dx/dX`` (3, 3) and two Lamé parameters ``mu``, ``lam``
(Pa, i.e. energy per rest volume), selected by an integer *material code* inside the kernels:

* ``CODE_COROTATED = 0``, co-rotated linear elasticity.  With the polar decomposition ``F = R S`` (``R`` a proper
  rotation, ``S`` symmetric)::

      psi = mu |F - R|_F^2 + lam/2 tr(S - I)^2
      P   = dpsi/dF = 2 mu (F - R) + lam tr(R^T F - I) R
      dP  = 2 mu dF + (lam tr(S - I) - 2 mu) dR + lam tr(R^T dF) R,   dR = R [w]x,
      w   = (tr(S) I - S)^{-1} vee(R^T dF - dF^T R)

  (from ``R^T dF = [w]x S + dS`` with ``dS`` symmetric: ``R^T dF - dF^T R = [w]x S + S [w]x
  = [(tr(S) I - S) w]x``; and ``d tr(S) = tr(R^T dF)`` because ``tr([w]x^T S) = 0``).  ``R`` maximises
  ``tr(R^T F)`` over SO(3), i.e. ``R = U diag(1, 1, det(U V^T)) V^T`` from the SVD ``F = U Sigma V^T``: for an
  inverted element (``det F < 0``) the smallest singular value carries the sign.  It is computed without an
  SVD, as the rotation of the unit quaternion that is the dominant eigenvector of Horn's symmetric 4x4 matrix
  ``N(F)`` with ``q^T N q = tr(R(q)^T F)`` (B. K. P. Horn, "Closed-form solution of absolute orientation using
  unit quaternions", JOSA A 4(4), 1987), found as in Theobald's QCP method (Newton's method on the
  characteristic polynomial, then a column of the adjugate), polished by one Newton step on SO(3), with cyclic
  Jacobi rotations as the fallback when the top eigenvalues nearly coincide (0.2 to 0.3 us per call against
  3 to 5 us for ``np.linalg.svd`` in a kernel; R matches the SVD's to ~1e-14 / gap).  The gap to the next
  eigenvalue is ``2 (sigma_2 + sigma_3)``, the same quantity that conditions ``dR``: where two signed singular
  values sum to zero the rotation is not differentiable and ``tr(S) I - S`` is singular (its determinant is then
  floored at ``1e-12 |S|^3``).

* ``CODE_NEOHOOKEAN = 1``, stable neo-Hookean (B. Smith, F. de Goes, T. Kim, "Stable Neo-Hookean Flesh
  Simulation", ACM TOG 37(2), 2018, Eq. 14 with the Lamé re-parameterisation of its section 3.4)::

      psi = mu_s/2 (I_C - 3) + lam_s/2 (J - alpha)^2 - mu_s/2 log(I_C + 1) - psi_0
      P   = mu_s (1 - 1/(I_C + 1)) F + lam_s (J - alpha) dJ/dF
      dP  = mu_s (1 - 1/(I_C + 1)) dF + 2 mu_s/(I_C + 1)^2 (F : dF) F + lam_s (dJ/dF : dF) dJ/dF
            + lam_s (J - alpha) d(dJ/dF)

  with ``I_C = tr(F^T F)``, ``J = det F``, ``dJ/dF = cof F`` (columns ``f_1 x f_2``, ``f_2 x f_0``,
  ``f_0 x f_1`` of the columns ``f_j`` of F), ``alpha = 1 + 3 mu_s / (4 lam_s)``, ``mu_s = 4 mu / 3``,
  ``lam_s = lam + 5 mu / 6`` (so that the small-strain response is linear elasticity with ``mu``, ``lam``), and
  the constant ``psi_0 = lam_s/2 (1 - alpha)^2 - mu_s/2 log 4`` that makes ``psi(I) = 0``.  The law is defined
  and smooth for inverted elements (``J <= 0``).

Tensor index order: ``A[i, j, k, l] = dP_ij / dF_kl`` (3, 3, 3, 3).  Both laws have ``psi(I) = 0`` and
``P(I) = 0``, are invariant under rotations ``F -> Q F`` and linearise at ``F = I`` to
``P = 2 mu eps + lam tr(eps) I``.
"""

from __future__ import annotations

import math

import numpy as np

from redmax._jit import njit
from redmax.errors import ModelError

__all__ = ["CODE_COROTATED", "CODE_NEOHOOKEAN", "MATERIALS", "dP_dF", "first_piola", "lame", "psi"]

CODE_COROTATED = 0
CODE_NEOHOOKEAN = 1
MATERIALS = {"corotated": CODE_COROTATED, "neohookean": CODE_NEOHOOKEAN}  # material name -> code

_LOG4 = math.log(4.0)
_JACOBI_SWEEPS = 12  # cyclic Jacobi sweeps at most (quadratic convergence: 3 to 5 suffice in practice)


def lame(young: float, poisson: float) -> tuple[float, float]:
    """Lamé parameters from Young's modulus and Poisson's ratio.

    ``mu = E / (2 (1 + nu))``, ``lam = E nu / ((1 + nu)(1 - 2 nu))``.

    Args:
        young: Young's modulus E (Pa), positive and finite.
        poisson: Poisson's ratio nu, in the open interval (-1, 0.5).

    Returns:
        ``(mu, lam)`` in the units of ``young``.

    Raises:
        ModelError: if E or nu is out of range or not a finite number.
    """
    try:
        E = float(young)
        nu = float(poisson)
    except (TypeError, ValueError):
        raise ModelError(f"lame: young and poisson must be numbers, got {young!r} and {poisson!r}") from None
    if not (math.isfinite(E) and E > 0.0):
        raise ModelError(f"lame: young (Young's modulus) must be positive and finite, got {young!r}")
    if not (math.isfinite(nu) and -1.0 < nu < 0.5):
        raise ModelError(f"lame: poisson (Poisson's ratio) must lie in the open interval (-1, 0.5), got {poisson!r}")
    return E / (2.0 * (1.0 + nu)), E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))


@njit(cache=True)
def _horn(F, N):
    """Fill ``N`` (4, 4) with Horn's matrix of ``F`` (3, 3): ``q^T N q = tr(R(q)^T F)`` for ``q = (w, x, y, z)``."""
    N[0, 0] = F[0, 0] + F[1, 1] + F[2, 2]
    N[1, 1] = F[0, 0] - F[1, 1] - F[2, 2]
    N[2, 2] = -F[0, 0] + F[1, 1] - F[2, 2]
    N[3, 3] = -F[0, 0] - F[1, 1] + F[2, 2]
    N[0, 1] = N[1, 0] = F[2, 1] - F[1, 2]
    N[0, 2] = N[2, 0] = F[0, 2] - F[2, 0]
    N[0, 3] = N[3, 0] = F[1, 0] - F[0, 1]
    N[1, 2] = N[2, 1] = F[0, 1] + F[1, 0]
    N[1, 3] = N[3, 1] = F[0, 2] + F[2, 0]
    N[2, 3] = N[3, 2] = F[1, 2] + F[2, 1]


@njit(cache=True)
def _jacobi_quaternion(N, V):
    """Dominant eigenvector (w, x, y, z) of the symmetric ``N`` (4, 4) by cyclic Jacobi rotations (robust for
    any spectrum, the fallback of :func:`_rotation`).  ``N`` is overwritten (diagonalised), ``V`` (4, 4) is
    scratch (eigenvectors by column)."""
    scale = 0.0
    for p in range(4):
        for q in range(4):
            scale += N[p, q] * N[p, q]
            V[p, q] = 1.0 if p == q else 0.0
    for _ in range(_JACOBI_SWEEPS):
        off = 0.0
        for p in range(3):
            for q in range(p + 1, 4):
                off += N[p, q] * N[p, q]
        if off <= 1e-36 * scale:
            break
        for p in range(3):
            for q in range(p + 1, 4):
                apq = N[p, q]
                if apq == 0.0:
                    continue
                theta = (N[q, q] - N[p, p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + math.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                N[p, p] -= t * apq
                N[q, q] += t * apq
                N[p, q] = 0.0
                N[q, p] = 0.0
                for r in range(4):
                    if r != p and r != q:
                        arp = N[r, p]
                        arq = N[r, q]
                        N[r, p] = N[p, r] = c * arp - s * arq
                        N[r, q] = N[q, r] = s * arp + c * arq
                    vrp = V[r, p]
                    vrq = V[r, q]
                    V[r, p] = c * vrp - s * vrq
                    V[r, q] = s * vrp + c * vrq
    k = 0
    for p in range(1, 4):
        if N[p, p] > N[k, k]:
            k = p
    return V[0, k], V[1, k], V[2, k], V[3, k]


@njit(cache=True)
def _minor(M, r, c):
    """Determinant of ``M`` (4, 4) without row r and column c."""
    i0 = 1 if r == 0 else 0
    i1 = 2 if r <= 1 else 1
    i2 = 3 if r <= 2 else 2
    j0 = 1 if c == 0 else 0
    j1 = 2 if c <= 1 else 1
    j2 = 3 if c <= 2 else 2
    return (M[i0, j0] * (M[i1, j1] * M[i2, j2] - M[i1, j2] * M[i2, j1])
            - M[i0, j1] * (M[i1, j0] * M[i2, j2] - M[i1, j2] * M[i2, j0])
            + M[i0, j2] * (M[i1, j0] * M[i2, j1] - M[i1, j1] * M[i2, j0]))


@njit(cache=True)
def _det4(M):
    """Determinant of ``M`` (4, 4) by the Laplace expansion in the 2x2 minors of rows (0, 1) and (2, 3)."""
    s0 = M[0, 0] * M[1, 1] - M[1, 0] * M[0, 1]
    s1 = M[0, 0] * M[1, 2] - M[1, 0] * M[0, 2]
    s2 = M[0, 0] * M[1, 3] - M[1, 0] * M[0, 3]
    s3 = M[0, 1] * M[1, 2] - M[1, 1] * M[0, 2]
    s4 = M[0, 1] * M[1, 3] - M[1, 1] * M[0, 3]
    s5 = M[0, 2] * M[1, 3] - M[1, 2] * M[0, 3]
    c5 = M[2, 2] * M[3, 3] - M[3, 2] * M[2, 3]
    c4 = M[2, 1] * M[3, 3] - M[3, 1] * M[2, 3]
    c3 = M[2, 1] * M[3, 2] - M[3, 1] * M[2, 2]
    c2 = M[2, 0] * M[3, 3] - M[3, 0] * M[2, 3]
    c1 = M[2, 0] * M[3, 2] - M[3, 0] * M[2, 2]
    c0 = M[2, 0] * M[3, 1] - M[3, 0] * M[2, 1]
    return s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0


@njit(cache=True)
def _rotation(F, N, V, R):
    """The proper rotation ``R`` (3, 3, written) maximising ``tr(R^T F)``, for ``F`` (3, 3).

    Horn's quaternion: the dominant eigenvalue of ``N(F)`` by Newton's method on its characteristic polynomial
    ``l^4 - 2 |F|^2 l^2 - 8 det(F) l + det N`` from the upper bound ``sqrt(3) |F|`` (monotone convergence), the
    eigenvector as the largest column of ``adj(N - l I)`` (D. Theobald, Acta Cryst. A61, 2005), and one Newton
    step on SO(3) that makes ``R^T F`` symmetric (``R <- R exp([w]x)``, ``(tr(S) I - S) w = vee(S - S^T)``,
    ``S = R^T F``).  When the adjugate is small (top eigenvalues nearly equal), the eigenvector comes from
    Jacobi rotations instead.  ``N``, ``V`` (4, 4) are scratch.
    """
    _horn(F, N)
    f2 = 0.0
    for i in range(3):
        for j in range(3):
            f2 += F[i, j] * F[i, j]
    if f2 == 0.0:
        for i in range(3):
            for j in range(3):
                R[i, j] = 1.0 if i == j else 0.0
        return
    detF = (F[0, 0] * (F[1, 1] * F[2, 2] - F[1, 2] * F[2, 1]) - F[0, 1] * (F[1, 0] * F[2, 2] - F[1, 2] * F[2, 0])
            + F[0, 2] * (F[1, 0] * F[2, 1] - F[1, 1] * F[2, 0]))
    c2 = -2.0 * f2
    c1 = -8.0 * detF
    c0 = _det4(N)
    fn = math.sqrt(f2)
    ev = math.sqrt(3.0) * fn  # the eigenvalue estimate, from above
    # P is increasing and convex above its largest root, so Newton's steps from above shrink monotonically (at a
    # multiple root linearly); a step of the wrong sign or a longer one means rounding has taken over: stop there
    converged = False
    last = math.inf
    for _ in range(100):
        p = ((ev * ev + c2) * ev + c1) * ev + c0
        dp = (4.0 * ev * ev + 2.0 * c2) * ev + c1
        d = p / dp if dp > 0.0 else -1.0
        if not 0.0 <= d <= last:
            converged = True
            break
        last = d
        ev -= d
        if d <= 1e-15 * fn:
            converged = True
            break
    for i in range(4):
        V[i, i] = N[i, i] - ev
        for j in range(i + 1, 4):
            V[i, j] = V[j, i] = N[i, j]
    k = 0
    ck = 0.0
    for i in range(4):
        cii = abs(_minor(V, i, i))
        if cii > ck:
            k = i
            ck = cii
    # sum_i C_ii = |P'(l)| = g1 g2 g3 (the gaps to the other eigenvalues): accepted for g1 >~ 1e-3 |F|
    if converged and ck > 1e-2 * f2 * fn:
        w = _minor(V, k, 0) * (1.0 if k % 2 == 0 else -1.0)
        x = -_minor(V, k, 1) * (1.0 if k % 2 == 0 else -1.0)
        y = _minor(V, k, 2) * (1.0 if k % 2 == 0 else -1.0)
        z = -_minor(V, k, 3) * (1.0 if k % 2 == 0 else -1.0)
    else:
        w, x, y, z = _jacobi_quaternion(N, V)
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    R[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[0, 1] = 2.0 * (x * y - w * z)
    R[0, 2] = 2.0 * (x * z + w * y)
    R[1, 0] = 2.0 * (x * y + w * z)
    R[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[1, 2] = 2.0 * (y * z - w * x)
    R[2, 0] = 2.0 * (x * z - w * y)
    R[2, 1] = 2.0 * (y * z + w * x)
    R[2, 2] = 1.0 - 2.0 * (x * x + y * y)
    _polish(F, R, N)


@njit(cache=True)
def _polish(F, R, S):
    """One Newton step ``R <- R exp([w]x)`` towards a symmetric ``R^T F`` (``S`` (>= 3, >= 3) is scratch).

    Skipped unless the step is small against the curvature (an ill-conditioned ``tr(S) I - S``)."""
    for i in range(3):
        for j in range(3):
            S[i, j] = R[0, i] * F[0, j] + R[1, i] * F[1, j] + R[2, i] * F[2, j]
    b0 = S[2, 1] - S[1, 2]
    b1 = S[0, 2] - S[2, 0]
    b2 = S[1, 0] - S[0, 1]
    t = S[0, 0] + S[1, 1] + S[2, 2]
    a00 = t - S[0, 0]
    a11 = t - S[1, 1]
    a22 = t - S[2, 2]
    a01 = -0.5 * (S[0, 1] + S[1, 0])
    a02 = -0.5 * (S[0, 2] + S[2, 0])
    a12 = -0.5 * (S[1, 2] + S[2, 1])
    c00 = a11 * a22 - a12 * a12
    c01 = a02 * a12 - a01 * a22
    c02 = a01 * a12 - a02 * a11
    c11 = a00 * a22 - a02 * a02
    c12 = a01 * a02 - a00 * a12
    c22 = a00 * a11 - a01 * a01
    det = a00 * c00 + a01 * c01 + a02 * c02
    w0 = c00 * b0 + c01 * b1 + c02 * b2
    w1 = c01 * b0 + c11 * b1 + c12 * b2
    w2 = c02 * b0 + c12 * b1 + c22 * b2
    th2 = w0 * w0 + w1 * w1 + w2 * w2
    # trust the quadratic model only for |w| <= 1e-3 mu / |S| with mu = |det B| / |B|^2 <= the least eigenvalue
    # of B = tr(S) I - S (the curvature; the model's error is O(|S| |w|^3))
    bb = a00 * a00 + a11 * a11 + a22 * a22 + 2.0 * (a01 * a01 + a02 * a02 + a12 * a12)
    ss = 0.0
    for i in range(3):
        for j in range(3):
            ss += S[i, j] * S[i, j]
    if det == 0.0 or not th2 * bb * bb * ss <= 1e-6 * det ** 4:
        return
    w0 /= det
    w1 /= det
    w2 /= det
    th2 /= det * det
    if th2 < 1e-8:  # sin(t)/t and (1 - cos(t))/t^2 by their series (error < 1e-17)
        sa = 1.0 - th2 / 6.0
        sb = 0.5 - th2 / 24.0
    else:
        th = math.sqrt(th2)
        sa = math.sin(th) / th
        sb = (1.0 - math.cos(th)) / th2
    # E = exp([w]x) = I + sa [w]x + sb [w]x^2, [w]x^2 = w w^T - th2 I; R <- R E row by row
    e00 = 1.0 + sb * (w0 * w0 - th2)
    e11 = 1.0 + sb * (w1 * w1 - th2)
    e22 = 1.0 + sb * (w2 * w2 - th2)
    e01 = sb * w0 * w1 - sa * w2
    e10 = sb * w0 * w1 + sa * w2
    e02 = sb * w0 * w2 + sa * w1
    e20 = sb * w0 * w2 - sa * w1
    e12 = sb * w1 * w2 - sa * w0
    e21 = sb * w1 * w2 + sa * w0
    for i in range(3):
        r0 = R[i, 0]
        r1 = R[i, 1]
        r2 = R[i, 2]
        R[i, 0] = r0 * e00 + r1 * e10 + r2 * e20
        R[i, 1] = r0 * e01 + r1 * e11 + r2 * e21
        R[i, 2] = r0 * e02 + r1 * e12 + r2 * e22


@njit(cache=True)
def _corotated(mu, lam, F, P, A, want_A, work):
    """Co-rotated linear elasticity: returns psi, writes P (3, 3) and, if ``want_A``, A (3, 3, 3, 3).

    ``work`` (4, 4, 4) is scratch: ``work[0]``, ``work[1]`` the Jacobi matrices, ``work[2]`` R, ``work[3]``
    ``S`` then ``(tr(S) I - S)^{-1}`` (top-left 3x3 blocks).
    """
    R = work[2]
    M = work[3]
    _rotation(F, work[0], work[1], R)
    for i in range(3):  # S = R^T F (symmetric up to rounding: symmetrised for the derivative)
        for j in range(3):
            M[i, j] = R[0, i] * F[0, j] + R[1, i] * F[1, j] + R[2, i] * F[2, j]
    trS = M[0, 0] + M[1, 1] + M[2, 2]
    e = 0.0
    for i in range(3):
        for j in range(3):
            d = F[i, j] - R[i, j]
            e += d * d
    c = lam * (trS - 3.0)
    for i in range(3):
        for j in range(3):
            P[i, j] = 2.0 * mu * (F[i, j] - R[i, j]) + c * R[i, j]
    energy = mu * e + 0.5 * lam * (trS - 3.0) * (trS - 3.0)
    if not want_A:
        return energy
    # (tr(S) I - S)^{-1} by the adjugate of the symmetric matrix B = tr(S) I - S
    b00 = trS - M[0, 0]
    b11 = trS - M[1, 1]
    b22 = trS - M[2, 2]
    b01 = -0.5 * (M[0, 1] + M[1, 0])
    b02 = -0.5 * (M[0, 2] + M[2, 0])
    b12 = -0.5 * (M[1, 2] + M[2, 1])
    c00 = b11 * b22 - b12 * b12
    c01 = b02 * b12 - b01 * b22
    c02 = b01 * b12 - b02 * b11
    c11 = b00 * b22 - b02 * b02
    c12 = b01 * b02 - b00 * b12
    c22 = b00 * b11 - b01 * b01
    det = b00 * c00 + b01 * c01 + b02 * c02
    s2 = 0.0
    for i in range(3):
        for j in range(3):
            s2 += M[i, j] * M[i, j]
    floor = 1e-12 * s2 * math.sqrt(s2) + 1e-300
    if abs(det) < floor:
        det = floor if det >= 0.0 else -floor
    M[0, 0] = c00 / det
    M[1, 1] = c11 / det
    M[2, 2] = c22 / det
    M[0, 1] = M[1, 0] = c01 / det
    M[0, 2] = M[2, 0] = c02 / det
    M[1, 2] = M[2, 1] = c12 / det
    c1 = lam * (trS - 3.0) - 2.0 * mu
    for k in range(3):
        for l in range(3):
            # g = vee(R^T E_kl - E_lk R), E_kl the unit matrix of entry (k, l); w = (tr(S) I - S)^{-1} g
            g0 = (R[k, 2] if l == 1 else 0.0) - (R[k, 1] if l == 2 else 0.0)
            g1 = (R[k, 0] if l == 2 else 0.0) - (R[k, 2] if l == 0 else 0.0)
            g2 = (R[k, 1] if l == 0 else 0.0) - (R[k, 0] if l == 1 else 0.0)
            w0 = M[0, 0] * g0 + M[0, 1] * g1 + M[0, 2] * g2
            w1 = M[1, 0] * g0 + M[1, 1] * g1 + M[1, 2] * g2
            w2 = M[2, 0] * g0 + M[2, 1] * g1 + M[2, 2] * g2
            rkl = lam * R[k, l]
            for i in range(3):
                # dR_ij = (R [w]x)_ij: columns of [w]x are (0, w2, -w1), (-w2, 0, w0), (w1, -w0, 0)
                d0 = R[i, 1] * w2 - R[i, 2] * w1
                d1 = R[i, 2] * w0 - R[i, 0] * w2
                d2 = R[i, 0] * w1 - R[i, 1] * w0
                A[i, 0, k, l] = c1 * d0 + rkl * R[i, 0]
                A[i, 1, k, l] = c1 * d1 + rkl * R[i, 1]
                A[i, 2, k, l] = c1 * d2 + rkl * R[i, 2]
            A[k, l, k, l] += 2.0 * mu
    return energy


@njit(cache=True)
def _neohookean(mu, lam, F, P, A, want_A, work):
    """Stable neo-Hookean: returns psi, writes P (3, 3) and, if ``want_A``, A (3, 3, 3, 3).

    ``work`` (4, 4, 4) is scratch: ``work[0]`` holds ``dJ/dF`` (top-left 3x3 block).
    """
    mu_s = 4.0 * mu / 3.0
    lam_s = lam + 5.0 * mu / 6.0
    alpha = 1.0 + 0.75 * mu_s / lam_s
    G = work[0]
    for j in range(3):  # column j of cof F: f_{j+1} x f_{j+2}
        a = (j + 1) % 3
        b = (j + 2) % 3
        G[0, j] = F[1, a] * F[2, b] - F[2, a] * F[1, b]
        G[1, j] = F[2, a] * F[0, b] - F[0, a] * F[2, b]
        G[2, j] = F[0, a] * F[1, b] - F[1, a] * F[0, b]
    J = F[0, 0] * G[0, 0] + F[1, 0] * G[1, 0] + F[2, 0] * G[2, 0]
    IC = 0.0
    for i in range(3):
        for j in range(3):
            IC += F[i, j] * F[i, j]
    cF = mu_s * (1.0 - 1.0 / (IC + 1.0))
    cG = lam_s * (J - alpha)
    for i in range(3):
        for j in range(3):
            P[i, j] = cF * F[i, j] + cG * G[i, j]
    psi0 = 0.5 * lam_s * (1.0 - alpha) * (1.0 - alpha) - 0.5 * mu_s * _LOG4
    energy = 0.5 * mu_s * (IC - 3.0) + 0.5 * lam_s * (J - alpha) * (J - alpha) - 0.5 * mu_s * math.log(IC + 1.0) - psi0
    if not want_A:
        return energy
    cFF = 2.0 * mu_s / ((IC + 1.0) * (IC + 1.0))
    for i in range(3):
        for j in range(3):
            fij = cFF * F[i, j]
            gij = lam_s * G[i, j]
            for k in range(3):
                for l in range(3):
                    A[i, j, k, l] = fij * F[k, l] + gij * G[k, l]
            A[i, j, i, j] += cF
    # d(cof F): block (column a, column b) = -eps_abc [f_c]x for a != b, zero for a == b
    for a in range(3):
        for b in range(3):
            if a == b:
                continue
            c = 3 - a - b
            s = -cG if (b - a) % 3 == 1 else cG  # -eps_abc cG
            x0 = F[0, c]
            x1 = F[1, c]
            x2 = F[2, c]
            A[0, a, 1, b] -= s * x2
            A[0, a, 2, b] += s * x1
            A[1, a, 0, b] += s * x2
            A[1, a, 2, b] -= s * x0
            A[2, a, 0, b] -= s * x1
            A[2, a, 1, b] += s * x0
    return energy


@njit(cache=True)
def _evaluate(code, mu, lam, F, P, A, want_A, work):
    """psi(F) of material ``code``; writes P (3, 3) and, if ``want_A``, A (3, 3, 3, 3).  ``work``: (4, 4, 4)
    scratch.  The kernel behind :func:`psi`, :func:`first_piola`, :func:`dP_dF` and the element kernels."""
    if code == CODE_COROTATED:
        return _corotated(mu, lam, F, P, A, want_A, work)
    return _neohookean(mu, lam, F, P, A, want_A, work)


@njit(cache=True)
def psi(code, mu, lam, F):
    """Strain energy density of material ``code`` (0 co-rotated, 1 stable neo-Hookean; see the module docstring).

    Args:
        code: material code.
        mu, lam: Lamé parameters (Pa).
        F: deformation gradient dx/dX (3, 3).

    Returns:
        psi(F) (J/m^3, energy per rest volume); ``psi(I) = 0``.
    """
    P = np.empty((3, 3))
    A = np.empty((1, 1, 1, 1))
    return _evaluate(code, mu, lam, F, P, A, False, np.empty((4, 4, 4)))


@njit(cache=True)
def first_piola(code, mu, lam, F, P_out):
    """First Piola-Kirchhoff stress ``P = dpsi/dF`` of material ``code``.

    Args:
        code: material code (0 co-rotated, 1 stable neo-Hookean).
        mu, lam: Lamé parameters (Pa).
        F: deformation gradient (3, 3).
        P_out: (3, 3) output, overwritten with P (Pa).
    """
    A = np.empty((1, 1, 1, 1))
    _evaluate(code, mu, lam, F, P_out, A, False, np.empty((4, 4, 4)))


@njit(cache=True)
def dP_dF(code, mu, lam, F, A_out):
    """Derivative of the first Piola-Kirchhoff stress, ``A[i, j, k, l] = dP_ij / dF_kl``.

    Args:
        code: material code (0 co-rotated, 1 stable neo-Hookean).
        mu, lam: Lamé parameters (Pa).
        F: deformation gradient (3, 3).
        A_out: (3, 3, 3, 3) output, overwritten (Pa).
    """
    P = np.empty((3, 3))
    _evaluate(code, mu, lam, F, P, A_out, True, np.empty((4, 4, 4)))
