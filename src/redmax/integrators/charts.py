"""Chart switching and re-parameterisation for the multistep implicit integrators (Sueda notes §2.4.5, §2.4.8).

After each step of BDF1, SDIRK2 or BDF2 the joints that re-parameterise do so, and the state the next step reads
(the current q, qd and, for BDF2, the previous ones) is remapped with them so that every formula keeps reading
one chart:

* Euler-angle spherical joints (alone or inside a composite) switch when ``|det S_top| < 1/2``, to the chart that
  maximises the smaller ``|det S_top|`` over the current and the previous rotations; angles are recomputed from
  the rotations (``euler_from_R``), the previous ones unwrapped by multiples of 2 pi to lie within pi of the
  current ones, and rates mapped by ``S_new^-1 S_old qd`` (the angular velocity is unchanged);
* spherical joints in exponential coordinates with ``|q| > 1.5 pi`` take ``(1 - 2 pi/|q|) q`` (the same map on the
  previous coordinates), rates again by ``S_new^-1 S_old qd``.

The previous state is stored for every method, BDF1 included: the choice of chart reads the previous rotation.
"""

from __future__ import annotations

import math

import numpy as np

from redmax.joints.composite import _layout
from redmax.joints.primitive import COMPOSITE
from redmax.joints.spherical_euler import SPHERICAL_EULER, SWITCH_DET, euler_det, euler_from_R, euler_R_S
from redmax.joints.spherical_exp import REPARAM_RADIUS, SPHERICAL_EXP, sph_exp_S

__all__ = ["switch_charts"]


def _subjoints(model, i):
    """(code, first coordinate offset within the joint, chart-word shift) of joint i's primitive parts."""
    code = int(model.jtype[i])
    if code != COMPOSITE:
        return [(code, 0, 0)]
    p = model.jparam[model.jp_off[i]:model.jp_off[i + 1]]
    sub, _, _, _, qoff = _layout(p)
    return [(int(sub[k]), int(qoff[k]), 4 * k) for k in range(sub.shape[0])]


def _euler(chart, q, qd):
    R = np.empty((3, 3))
    St = np.empty((3, 3))
    Sd = np.empty((3, 3))
    euler_R_S(chart, np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(qd, dtype=float), R, St, Sd)
    return R, St


def _exp_S(q):
    St = np.zeros((3, 3))
    Sd = np.zeros((3, 3))
    sph_exp_S(np.ascontiguousarray(q, dtype=float), np.zeros(3), St, Sd)
    return St


def _remap_euler(old, new, q, qd, ref):
    R, St = _euler(old, q, qd)
    w = St @ qd
    qn = np.empty(3)
    euler_from_R(new, R, qn)
    if ref is not None:
        qn = qn + 2.0 * math.pi * np.round((ref - qn) / (2.0 * math.pi))
    _, Sn = _euler(new, qn, qd)
    return qn, np.linalg.solve(Sn, w)


def switch_charts(model, q: np.ndarray, qd: np.ndarray, js: np.ndarray, history=()) -> bool:
    """Re-parameterise ``(q, qd, js)`` in place where due, remapping every ``(q_prev, qd_prev)`` of ``history``
    (arrays, modified in place) with it (module docstring).  Returns True when anything changed."""
    changed = False
    for i in model.reparam_joints:
        i = int(i)
        a0 = int(model.idx[i])
        for code, off, shift in _subjoints(model, i):
            s = slice(a0 + off, a0 + off + 3)
            if code == SPHERICAL_EULER:
                chart = (int(js[i]) >> shift) & 15
                if abs(euler_det(chart, float(q[s][1]))) >= SWITCH_DET:
                    continue
                rots = [_euler(chart, q[s], qd[s])[0]] + [_euler(chart, hq[s], hqd[s])[0] for hq, hqd in history]
                best, best_d = chart, -1.0
                qc = np.empty(3)
                for c in range(12):
                    d = math.inf
                    for R in rots:
                        euler_from_R(c, R, qc)
                        d = min(d, abs(euler_det(c, qc[1])))
                    if d > best_d + 1e-12:
                        best, best_d = c, d
                if best == chart:
                    continue
                qn, qdn = _remap_euler(chart, best, q[s].copy(), qd[s].copy(), None)
                for hq, hqd in history:
                    hq[s], hqd[s] = _remap_euler(chart, best, hq[s].copy(), hqd[s].copy(), qn)
                q[s], qd[s] = qn, qdn
                js[i] = (int(js[i]) & ~(15 << shift)) | (best << shift)
                changed = True
            elif code == SPHERICAL_EXP:
                r = float(np.linalg.norm(q[s]))
                if r <= REPARAM_RADIUS:
                    continue
                for v, vd in [(q, qd), *history]:
                    x = v[s].copy()
                    t = float(np.linalg.norm(x))
                    xn = (1.0 - 2.0 * math.pi / t) * x if t > 0 else x
                    vd[s] = np.linalg.solve(_exp_S(xn), _exp_S(x) @ vd[s])
                    v[s] = xn
                changed = True
    return changed
