"""Is a curve knotted?  The knot determinant of a polygon, for checking the paper/hagfish knot.

The determinant of a knot is ``|Delta(-1)|``, the Alexander polynomial at -1: 1 for the unknot, 3 for the trefoil
(the overhand knot), 5 for the figure-eight knot.  It is computed from one planar projection (Livingston, *Knot
Theory*, 1993, §3.2: Fox colourings): every crossing of the projected polygon joins the arc that passes over it
and the two arcs that end under it in the row ``2 x_over - x_in - x_out = 0``; the absolute value of any
(c-1) x (c-1) minor of that c x c matrix is the determinant.  A generic projection direction is drawn at random,
and :func:`knot_determinant` takes the answer of several directions, which must agree.

An open curve (a rope, the hagfish) is knotted or not once its ends are joined far away: :func:`closure` runs
each end radially outwards from the curve's centroid to a sphere much larger than the curve and joins the two
points on that sphere, so the closing path does not pass through the curve's tangle.
"""

from __future__ import annotations

import numpy as np

from redmax.errors import RedmaxError

__all__ = ["closure", "knot_determinant"]


def closure(P, far: float = 20.0) -> np.ndarray:
    """The closed polygon of an open curve ``P`` (m, 3): the curve, then its ends joined through a sphere of
    ``far`` times the curve's size about its centroid (module docstring).  Returns (m + k, 3) vertices (closed:
    the last joins the first)."""
    P = np.asarray(P, dtype=float)
    c = P.mean(axis=0)
    size = float(np.max(np.linalg.norm(P - c, axis=1)))
    ua, uz = P[0] - c, P[-1] - c
    ua, uz = ua / np.linalg.norm(ua), uz / np.linalg.norm(uz)
    arc = []
    for s in np.linspace(0.0, 1.0, 24):
        v = (1.0 - s) * uz + s * ua
        if np.linalg.norm(v) < 1e-3:  # antipodal ends: go round through a perpendicular direction
            v = v + 1e-2 * np.cross(uz, [0.0, 0.0, 1.0] if abs(uz[2]) < 0.9 else [1.0, 0.0, 0.0])
        arc.append(c + far * size * v / np.linalg.norm(v))
    return np.vstack([P, arc])


def _crossings(X, H):
    """Crossings of the closed projected polygon X (m, 2) with heights H (m,): (under, over) curve parameters."""
    m = len(X)
    out = []
    for i in range(m):
        a, b = X[i], X[(i + 1) % m]
        d1 = b - a
        for j in range(i + 2, m):
            if i == 0 and j == m - 1:
                continue  # neighbours through the closing edge
            c, d = X[j], X[(j + 1) % m]
            d2 = d - c
            den = d1[0] * d2[1] - d1[1] * d2[0]
            if abs(den) < 1e-14:
                continue
            w = c - a
            s = (w[0] * d2[1] - w[1] * d2[0]) / den
            t = (w[0] * d1[1] - w[1] * d1[0]) / den
            if not (0.0 <= s < 1.0 and 0.0 <= t < 1.0):
                continue
            hi = H[i] + s * (H[(i + 1) % m] - H[i])
            hj = H[j] + t * (H[(j + 1) % m] - H[j])
            out.append((i + s, j + t) if hi < hj else (j + t, i + s))
    return out


def _determinant_along(P, d) -> int:
    d = d / np.linalg.norm(d)
    e1 = np.cross(d, [1.0, 0.0, 0.0] if abs(d[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(d, e1)
    cr = _crossings(np.stack([P @ e1, P @ e2], axis=1), P @ d)
    c = len(cr)
    if c < 2:
        return 1
    unders = np.sort([u for u, _ in cr])

    def arc(param):  # arc k runs from the k-th undercrossing to the next one (cyclically)
        return (int(np.searchsorted(unders, param, side="right")) - 1) % c

    A = np.zeros((c, c))
    for u, o in cr:
        k = int(np.searchsorted(unders, u))
        A[k, arc(o)] += 2.0
        A[k, (k - 1) % c] -= 1.0
        A[k, k] -= 1.0
    return round(abs(np.linalg.det(A[1:, 1:])))


def knot_determinant(P, closed: bool = True, directions: int = 3, seed: int = 0) -> int:
    """The knot determinant of the polygon ``P`` (m, 3) (module docstring): 1 unknot, 3 trefoil, 5 figure-eight.

    Args:
        P: vertices; ``closed``: P is a closed polygon (the last vertex joins the first), otherwise it is closed
            by :func:`closure` first.
        directions: number of random projection directions, whose answers must agree.
    Raises:
        RedmaxError: the directions disagree (a projection was not generic).
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] != 3 or P.shape[0] < 3 or not np.all(np.isfinite(P)):
        raise RedmaxError(f"knot_determinant: P must be finite (m >= 3, 3) vertices, got shape {P.shape}")
    if not closed:
        P = closure(P)
    rng = np.random.default_rng(seed)
    dets = {_determinant_along(P, rng.normal(size=3)) for _ in range(max(1, directions))}
    if len(dets) != 1:
        raise RedmaxError(f"knot_determinant: projections disagree ({sorted(dets)})")
    return dets.pop()
