"""Spatial algebra on SO(3) and SE(3): the vocabulary of every other module.

Conventions (RedMax supplemental §2, Sueda notes §1):

* A twist is angular-first, ``phi = [omega; v]`` (6,), expressed in the frame of the body it describes.
* ``E = [[R, p], [0, 1]]`` (4, 4) places a frame: ``E_ab`` is frame *b* expressed in frame *a*; it maps
  points from *b* to *a*.
* ``Ad(E_ab)`` (6, 6) maps a twist in *b* to the same twist in *a*: ``Ad = [[R, 0], [[p] R, R]]``
  (notes Eq. 1.14).  Its transpose maps wrenches (angular-first, ``[torque; force]``) from *a* to *b*.
* ``ad(phi) = [[[w], 0], [[v], [w]]]`` is the spatial cross product (notes Eq. 1.19) and
  ``Ad(E)' = Ad(E) ad(phi)`` when ``E' = E [phi]`` (notes Eq. 1.18).

Every function is a Numba ``@njit`` kernel so that the recursive algorithms can call it; each also works
from Python on NumPy arrays.  Functions that are smooth (``skew``, ``exp_so3``, ``exp_se3``, ``Ad``,
``ad``, products, inverses) are scalar-generic: they accept complex arrays, so complex-step
differentiation passes through them.  The logarithms are real-only (they branch on magnitudes).
"""

from __future__ import annotations

import math

import numpy as np

from redmax._jit import njit

__all__ = [
    "Ad",
    "Addot",
    "Gamma",
    "ad",
    "adT",
    "adv",
    "compose",
    "exp_se3",
    "exp_so3",
    "inertia_transform",
    "inv_se3",
    "log_se3",
    "log_so3",
    "make_E",
    "right_jacobian_so3",
    "rot_axis_angle",
    "rot_x",
    "rot_y",
    "rot_z",
    "skew",
    "spatial_inertia",
    "trans",
    "unskew",
]

_EPS_SERIES = 1e-4  # below this squared angle the trigonometric ratios use their Taylor series


@njit(cache=True)
def skew(a):
    """Cross-product matrix ``[a]`` with ``[a] b = a x b`` (notes Eq. 1.7).

    Args:
        a: (3,) vector.
    Returns:
        (3, 3) skew-symmetric matrix, same dtype as ``a``.
    """
    S = np.zeros((3, 3), dtype=a.dtype)
    S[0, 1] = -a[2]
    S[0, 2] = a[1]
    S[1, 0] = a[2]
    S[1, 2] = -a[0]
    S[2, 0] = -a[1]
    S[2, 1] = a[0]
    return S


@njit(cache=True)
def unskew(S):
    """Inverse of :func:`skew`, using the skew-symmetric part ``(S - S^T)/2``.

    Args:
        S: (3, 3) matrix.
    Returns:
        (3,) vector ``a`` with ``[a] = (S - S^T)/2``.
    """
    a = np.empty(3, dtype=S.dtype)
    a[0] = 0.5 * (S[2, 1] - S[1, 2])
    a[1] = 0.5 * (S[0, 2] - S[2, 0])
    a[2] = 0.5 * (S[1, 0] - S[0, 1])
    return a


@njit(cache=True)
def _so3_coeffs(th2):
    """Return ``(sin t / t, (1 - cos t)/t^2, (t - sin t)/t^3)`` for ``t^2 = th2`` (series near 0)."""
    if abs(th2.real) < _EPS_SERIES:
        a = 1.0 - th2 / 6.0 + th2 * th2 / 120.0 - th2 * th2 * th2 / 5040.0
        b = 0.5 - th2 / 24.0 + th2 * th2 / 720.0 - th2 * th2 * th2 / 40320.0
        c = 1.0 / 6.0 - th2 / 120.0 + th2 * th2 / 5040.0 - th2 * th2 * th2 / 362880.0
    else:
        th = np.sqrt(th2)
        s = np.sin(th)
        co = np.cos(th)
        a = s / th
        b = (1.0 - co) / th2
        c = (th - s) / (th2 * th)
    return a, b, c


@njit(cache=True)
def exp_so3(w):
    """Rotation matrix ``exp([w])`` by Rodrigues' formula (notes Eq. 1.10).

    Args:
        w: (3,) rotation vector (axis times angle, radians).
    Returns:
        (3, 3) rotation matrix, same dtype as ``w``.
    """
    th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    a, b, _ = _so3_coeffs(th2)
    W = skew(w)
    R = a * W + b * (W @ W)
    for k in range(3):
        R[k, k] += 1.0
    return R


@njit(cache=True)
def right_jacobian_so3(w):
    """Right Jacobian of SO(3): ``exp([w])^T d exp([w]) = [J_r(w) dw]``.

    ``J_r(w) = I - (1 - cos t)/t^2 [w] + (t - sin t)/t^3 [w]^2`` with ``t = |w|``.  It is the joint
    Jacobian S of a spherical joint in exponential coordinates (supplemental Eq. 38, in closed form).

    Args:
        w: (3,) rotation vector.
    Returns:
        (3, 3) matrix.
    """
    th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    _, b, c = _so3_coeffs(th2)
    W = skew(w)
    J = -b * W + c * (W @ W)
    for k in range(3):
        J[k, k] += 1.0
    return J


@njit(cache=True)
def log_so3(R):
    """Rotation vector ``w`` with ``exp([w]) = R`` and ``|w| <= pi`` (robust near 0 and pi).

    The angle is ``atan2(|sin|, cos)``, accurate over the whole range; near pi the axis is read from
    the symmetric part ``(R + R^T)/2 - cos(t) I = (1 - cos t) n n^T`` and its sign from the skew part.

    Args:
        R: (3, 3) rotation matrix (real).
    Returns:
        (3,) rotation vector.
    """
    s = unskew(R)  # = sin(t) n
    sn = math.sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2])
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    th = math.atan2(sn, c)
    w = np.empty(3)
    if th < 1e-6:
        f = 1.0 + th * th / 6.0  # t / sin t
        for k in range(3):
            w[k] = f * s[k]
        return w
    if th < math.pi - 1e-3:
        f = th / sn
        for k in range(3):
            w[k] = f * s[k]
        return w
    # Near pi: axis from the symmetric part, sign from the (small) skew part.
    B = np.empty((3, 3))
    for r in range(3):
        for k in range(3):
            B[r, k] = 0.5 * (R[r, k] + R[k, r])
        B[r, r] -= c
    k0 = 0
    if B[1, 1] > B[k0, k0]:
        k0 = 1
    if B[2, 2] > B[k0, k0]:
        k0 = 2
    n = np.empty(3)
    nrm = 0.0
    for r in range(3):
        n[r] = B[r, k0]
        nrm += n[r] * n[r]
    nrm = math.sqrt(nrm)
    for r in range(3):
        n[r] /= nrm
    if n[0] * s[0] + n[1] * s[1] + n[2] * s[2] < 0.0:
        for r in range(3):
            n[r] = -n[r]
    for r in range(3):
        w[r] = th * n[r]
    return w


@njit(cache=True)
def exp_se3(phi):
    """Rigid transform ``exp([phi])`` for a twist ``phi = [w; v]`` (notes Eq. 1.10).

    Args:
        phi: (6,) twist, angular first.
    Returns:
        (4, 4) transform ``[[exp([w]), V v], [0, 1]]`` with ``V = I + b [w] + c [w]^2``.
    """
    w = phi[0:3]
    th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    a, b, c = _so3_coeffs(th2)
    W = skew(w)
    W2 = W @ W
    E = np.zeros((4, 4), dtype=phi.dtype)
    for r in range(3):
        for k in range(3):
            E[r, k] = a * W[r, k] + b * W2[r, k]
        E[r, r] += 1.0
    for r in range(3):
        acc = phi[3 + r]
        for k in range(3):
            acc += (b * W[r, k] + c * W2[r, k]) * phi[3 + k]
        E[r, 3] = acc
    E[3, 3] = 1.0
    return E


@njit(cache=True)
def log_se3(E):
    """Twist ``phi`` with ``exp([phi]) = E`` and rotation angle in [0, pi] (real only).

    Args:
        E: (4, 4) rigid transform.
    Returns:
        (6,) twist ``[w; V^-1 p]``.
    """
    R = np.ascontiguousarray(E[0:3, 0:3])
    w = log_so3(R)
    th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    # V^-1 = I - 1/2 [w] + g [w]^2, g = (1 - t sin t / (2 (1 - cos t))) / t^2
    if th2 < _EPS_SERIES:
        g = 1.0 / 12.0 + th2 / 720.0 + th2 * th2 / 30240.0
    else:
        th = math.sqrt(th2)
        g = (1.0 - th * math.sin(th) / (2.0 * (1.0 - math.cos(th)))) / th2
    W = skew(w)
    W2 = W @ W
    phi = np.empty(6)
    phi[0:3] = w
    for r in range(3):
        acc = E[r, 3]
        for k in range(3):
            acc += (-0.5 * W[r, k] + g * W2[r, k]) * E[k, 3]
        phi[3 + r] = acc
    return phi


@njit(cache=True, error_model="numpy")  # division by a zero determinant gives inf/nan, never ZeroDivisionError
def solve3(A, b, out):
    """``out = A^-1 b`` for a 3x3 ``A`` by its adjugate (Cramer's rule); scalar-generic (complex step passes).
    Never raises: a singular or non-finite ``A`` gives non-finite ``out``, for the caller's finiteness check.
    Returns det(A)."""
    c00 = A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]
    c01 = A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]
    c02 = A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]
    det = A[0, 0] * c00 + A[0, 1] * c01 + A[0, 2] * c02
    x0 = (c00 * b[0] + (A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2]) * b[1]
          + (A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]) * b[2]) / det
    x1 = (c01 * b[0] + (A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0]) * b[1]
          + (A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2]) * b[2]) / det
    x2 = (c02 * b[0] + (A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1]) * b[1]
          + (A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]) * b[2]) / det
    out[0] = x0
    out[1] = x1
    out[2] = x2
    return det


@njit(cache=True)
def inv_se3(E):
    """Inverse rigid transform ``[[R^T, -R^T p], [0, 1]]`` (notes Eq. 1.4).

    Args:
        E: (4, 4) rigid transform.
    Returns:
        (4, 4) inverse, same dtype.
    """
    Ei = np.zeros((4, 4), dtype=E.dtype)
    for r in range(3):
        for k in range(3):
            Ei[r, k] = E[k, r]
    for r in range(3):
        Ei[r, 3] = -(E[0, r] * E[0, 3] + E[1, r] * E[1, 3] + E[2, r] * E[2, 3])
    Ei[3, 3] = 1.0
    return Ei


@njit(cache=True)
def compose(A, B):
    """Product of two rigid transforms ``A B`` exploiting the last row ``[0 0 0 1]``.

    Args:
        A, B: (4, 4) rigid transforms of the same dtype.
    Returns:
        (4, 4) transform.
    """
    C = np.zeros((4, 4), dtype=A.dtype)
    for r in range(3):
        for k in range(4):
            acc = A[r, 0] * B[0, k] + A[r, 1] * B[1, k] + A[r, 2] * B[2, k]
            if k == 3:
                acc += A[r, 3]
            C[r, k] = acc
    C[3, 3] = 1.0
    return C


@njit(cache=True)
def Ad(E):
    """Adjoint ``Ad(E) = [[R, 0], [[p] R, R]]`` (notes Eq. 1.14).

    Args:
        E: (4, 4) rigid transform ``E_ab``.
    Returns:
        (6, 6) matrix mapping twists in *b* to twists in *a*.
    """
    A = np.zeros((6, 6), dtype=E.dtype)
    p0 = E[0, 3]
    p1 = E[1, 3]
    p2 = E[2, 3]
    for r in range(3):
        for k in range(3):
            A[r, k] = E[r, k]
            A[3 + r, 3 + k] = E[r, k]
    for k in range(3):
        A[3, k] = -p2 * E[1, k] + p1 * E[2, k]
        A[4, k] = p2 * E[0, k] - p0 * E[2, k]
        A[5, k] = -p1 * E[0, k] + p0 * E[1, k]
    return A


@njit(cache=True)
def ad(phi):
    """Spatial cross product matrix ``ad(phi) = [[[w], 0], [[v], [w]]]`` (notes Eq. 1.19).

    Args:
        phi: (6,) twist.
    Returns:
        (6, 6) matrix; ``ad(x) y`` is the Lie bracket ``[x, y]``.
    """
    A = np.zeros((6, 6), dtype=phi.dtype)
    W = skew(phi[0:3])
    V = skew(phi[3:6])
    for r in range(3):
        for k in range(3):
            A[r, k] = W[r, k]
            A[3 + r, 3 + k] = W[r, k]
            A[3 + r, k] = V[r, k]
    return A


@njit(cache=True)
def adT(phi, f):
    """``ad(phi)^T f`` without forming the matrix (the Coriolis wrench operator, notes Eq. 1.21).

    Args:
        phi: (6,) twist ``[w; v]``.
        f: (6,) wrench ``[n; g]`` (angular first).
    Returns:
        (6,) wrench ``[-(w x n) - (v x g); -(w x g)]``.
    """
    w0, w1, w2 = phi[0], phi[1], phi[2]
    v0, v1, v2 = phi[3], phi[4], phi[5]
    n0, n1, n2 = f[0], f[1], f[2]
    g0, g1, g2 = f[3], f[4], f[5]
    out = np.empty(6, dtype=f.dtype)
    out[0] = -(w1 * n2 - w2 * n1) - (v1 * g2 - v2 * g1)
    out[1] = -(w2 * n0 - w0 * n2) - (v2 * g0 - v0 * g2)
    out[2] = -(w0 * n1 - w1 * n0) - (v0 * g1 - v1 * g0)
    out[3] = -(w1 * g2 - w2 * g1)
    out[4] = -(w2 * g0 - w0 * g2)
    out[5] = -(w0 * g1 - w1 * g0)
    return out


@njit(cache=True)
def adv(x, y):
    """``ad(x) y`` without forming the matrix: the Lie bracket of two twists (notes Eq. 1.19).

    Args:
        x, y: (6,) twists of the same dtype.
    Returns:
        (6,) twist ``[wx x wy; vx x wy + wx x vy]``.
    """
    out = np.empty(6, dtype=x.dtype)
    w0, w1, w2 = x[0], x[1], x[2]
    v0, v1, v2 = x[3], x[4], x[5]
    out[0] = w1 * y[2] - w2 * y[1]
    out[1] = w2 * y[0] - w0 * y[2]
    out[2] = w0 * y[1] - w1 * y[0]
    out[3] = v1 * y[2] - v2 * y[1] + w1 * y[5] - w2 * y[4]
    out[4] = v2 * y[0] - v0 * y[2] + w2 * y[3] - w0 * y[5]
    out[5] = v0 * y[1] - v1 * y[0] + w0 * y[4] - w1 * y[3]
    return out


@njit(cache=True)
def Addot(E, phi):
    """Time derivative of ``Ad(E)`` when ``E' = E [phi]``: ``Ad(E) ad(phi)`` (supplemental Eq. 8).

    Args:
        E: (4, 4) transform.
        phi: (6,) twist of the moving frame, in its own coordinates.
    Returns:
        (6, 6) matrix.
    """
    return Ad(E) @ ad(phi)


@njit(cache=True)
def Gamma(r):
    """Point Jacobian ``[[r]^T, I]`` (3, 6): body twist -> velocity of body point ``r`` in body axes."""
    G = np.zeros((3, 6), dtype=r.dtype)
    S = skew(r)
    for a in range(3):
        for k in range(3):
            G[a, k] = S[k, a]
        G[a, 3 + a] = 1.0
    return G


@njit(cache=True)
def spatial_inertia(mass, I_diag):
    """Diagonal 6x6 spatial inertia ``diag(I1, I2, I3, m, m, m)`` at the centre of mass, principal axes.

    Args:
        mass: scalar mass.
        I_diag: (3,) principal moments.
    Returns:
        (6, 6) matrix.
    """
    M = np.zeros((6, 6))
    for k in range(3):
        M[k, k] = I_diag[k]
        M[3 + k, 3 + k] = mass
    return M


@njit(cache=True)
def inertia_transform(M_b, E_ba):
    """Express a spatial inertia given in frame *b* in frame *a*: ``Ad(E_ba)^T M_b Ad(E_ba)``.

    Used for body inertia at the joint (supplemental §6, ``M_j = Ad_ij^T M_i Ad_ij``) and for composite
    bodies (notes Eq. 1.26).

    Args:
        M_b: (6, 6) spatial inertia in frame *b*.
        E_ba: (4, 4) frame *a* expressed in frame *b*.
    Returns:
        (6, 6) spatial inertia in frame *a*.
    """
    A = Ad(E_ba)
    return A.T @ M_b @ A


# ---------------------------------------------------------------------------------------------------
# Python-level constructors (plain NumPy, float64) used by scenes and the builder.
# ---------------------------------------------------------------------------------------------------


def rot_axis_angle(axis, angle: float) -> np.ndarray:
    """Rotation by ``angle`` (radians) about ``axis`` (normalised here). Returns (3, 3)."""
    a = np.asarray(axis, dtype=float)
    n = np.linalg.norm(a)
    if not np.isfinite(n) or n == 0.0:
        raise ValueError("rotation axis must be a finite non-zero 3-vector")
    return exp_so3(a / n * float(angle))


def rot_x(angle: float) -> np.ndarray:
    """Rotation about x by ``angle`` radians, (3, 3)."""
    return rot_axis_angle((1.0, 0.0, 0.0), angle)


def rot_y(angle: float) -> np.ndarray:
    """Rotation about y by ``angle`` radians, (3, 3)."""
    return rot_axis_angle((0.0, 1.0, 0.0), angle)


def rot_z(angle: float) -> np.ndarray:
    """Rotation about z by ``angle`` radians, (3, 3)."""
    return rot_axis_angle((0.0, 0.0, 1.0), angle)


def make_E(R=None, p=None) -> np.ndarray:
    """Rigid transform (4, 4) from a rotation (3, 3; default identity) and a translation (3,; default 0)."""
    E = np.eye(4)
    if R is not None:
        E[:3, :3] = np.asarray(R, dtype=float)
    if p is not None:
        E[:3, 3] = np.asarray(p, dtype=float)
    return E


def trans(x: float, y: float, z: float) -> np.ndarray:
    """Pure translation transform (4, 4)."""
    return make_E(p=(x, y, z))
