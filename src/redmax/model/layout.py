"""The model packed into one int64 and one float64 array: the storage format every kernel reads.

The recursive algorithms are called once per state from Python, so their cost is dominated by the call (Numba's
type dispatch costs time for every argument) and by small allocations.  ``pack(model)`` builds two flat arrays the
kernels index directly; :class:`Layout` (read by :func:`offsets`) names every offset (``E_pj0 = (R0, p0)``
row-major, ``c`` the centre of mass and ``Ic`` the rotational inertia about it, both in the joint frame).

Both arrays are read-only, with one exception that the compiled kernels read as a type: the ints of a **lean**
model, one whose joints are all fixed, revolute or prismatic, are writeable.  No kernel writes to them; a call
gated by :func:`redmax._kernels.dispatch.lean_gate` compiles the other joint families (spherical, Euler, free,
planar, universal, composite, splines and registered ones) only for the read-only type, so a robot of revolute
joints never compiles them (the larger part of its first call's compile time).  A writeable copy of a non-lean
model's ints would be read as lean: pass the model's own arrays, or ``pack`` again.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from redmax._jit import njit
from redmax.joints.simple import PRISMATIC

__all__ = ["LEAN_KERNELS", "NO_FEXT", "SIMPLE_MAX", "Layout", "armature_offset", "initial_jstate", "is_lean", "offsets",
           "pack"]

SIMPLE_MAX = PRISMATIC  # type codes <= this take simple_motion (FIXED=0, REVOLUTE=1, PRISMATIC=2)


class Layout(NamedTuple):
    """Offsets into the packed arrays, the one place that defines their layout.

    ints ``Ii``: ``[nb, n, parent (nb), jtype (nb), idx (nb+1), jp_off (nb+1), jstate0 (nb)]``;
    floats ``Ff``: ``[R0 (9nb), p0 (3nb), M_joint (36nb), Ad_bj (36nb), mass (nb), c (3nb), Ic (9nb),
    gravity (3), jparam, armature (n)]``.  Kernels read it with ``nb, n, o_par, ... = offsets(Ii)`` (or by
    field name); the per-DOF armature (added to the diagonal of M, zeros for most models) follows the joint
    parameters at :func:`armature_offset`.
    """

    nb: int
    n: int
    o_par: int  # parent (nb,)
    o_typ: int  # joint type codes (nb,)
    o_idx: int  # DOF offsets (nb+1,)
    o_jp: int  # joint parameter offsets (nb+1,)
    f_R: int  # E_pj0 rotations (nb, 9) row-major
    f_p: int  # E_pj0 translations (nb, 3)
    f_M: int  # joint-frame spatial inertias (nb, 36)
    f_A: int  # Ad_bj (nb, 36)
    f_m: int  # masses (nb,)
    f_c: int  # centres of mass in the joint frames (nb, 3)
    f_I: int  # rotational inertias about the centres of mass, joint frames (nb, 9)
    f_g: int  # gravity (3,)
    f_jp: int  # joint parameters


@njit(cache=True)
def offsets(Ii):
    """The :class:`Layout` of a packed model."""
    nb = Ii[0]
    return Layout(nb, Ii[1], 2, 2 + nb, 2 + 2 * nb, 3 + 3 * nb, 0, 9 * nb, 12 * nb, 48 * nb, 84 * nb, 85 * nb,
                  88 * nb, 97 * nb, 97 * nb + 3)


@njit(cache=True, inline="always")
def armature_offset(Ii):
    """Offset of the per-DOF armature (n,) in Ff: right after the joint parameters."""
    nb = Ii[0]
    return 97 * nb + 3 + Ii[3 + 4 * nb]  # f_jp + jp_off[nb]


@njit(cache=True)
def initial_jstate(Ii):
    """The model's initial chart words, a view into Ii (nb,)."""
    o = offsets(Ii)
    return Ii[o.o_jp + o.nb + 1 : o.o_jp + 2 * o.nb + 1]


def pack(tree, gravity, jstate0, armature=None) -> tuple[np.ndarray, np.ndarray]:
    """(Ii, Ff) of a :class:`redmax.model.Tree` with gravity (3,), initial charts (nb,) and the per-DOF armature
    (n,) (default zeros) (see :class:`Layout`)."""
    nb = tree.nb
    Ii = np.concatenate([[nb, tree.idx[-1]], tree.parent, tree.jtype, tree.idx, tree.jp_off,
                         jstate0]).astype(np.int64)
    M = tree.M_joint
    m = tree.mass
    # centre of mass in the joint frame: the lower-left block of M_joint is -m [c], so m c = (M42, M50, M31)
    mc = np.stack([M[:, 4, 2], M[:, 5, 0], M[:, 3, 1]], axis=1)
    c = np.divide(mc, m[:, None], out=np.zeros_like(mc), where=m[:, None] > 0)
    Ic = np.empty((nb, 3, 3))
    for i in range(nb):
        C = np.array([[0, -c[i, 2], c[i, 1]], [c[i, 2], 0, -c[i, 0]], [-c[i, 1], c[i, 0], 0]])
        Ic[i] = M[i, :3, :3] - m[i] * (C.T @ C)
    Ff = np.concatenate([tree.E_pj0[:, :3, :3].reshape(-1), tree.E_pj0[:, :3, 3].reshape(-1), M.reshape(-1),
                         tree.Ad_bj.reshape(-1), m, c.reshape(-1), Ic.reshape(-1), gravity, tree.jparam,
                         np.zeros(tree.idx[-1]) if armature is None else np.asarray(armature, dtype=float)])
    Ii.setflags(write=is_lean(tree.jtype))  # see the module docstring: the type says "lean"
    Ff.setflags(write=False)
    return Ii, Ff


# False: pack every model (and force program) for the full kernels, one variant of each.  Its default is read from
# the environment variable REDMAX_LEAN_KERNELS ("0", "false", "no" or "off" turn it off), which a process's children
# inherit (a test suite whose subprocesses should share its compiled variants).
LEAN_KERNELS = os.environ.get("REDMAX_LEAN_KERNELS", "1").strip().lower() not in ("0", "false", "no", "off")


def is_lean(jtype) -> bool:
    """True when every joint type code is fixed, revolute or prismatic (a lean model: writeable packed ints), and
    :data:`LEAN_KERNELS` is on.  A process that builds models of both kinds compiles both variants of the kernels
    they use; a test suite or a long-lived service that prefers one full variant sets ``LEAN_KERNELS = False``
    before building its models (or ``REDMAX_LEAN_KERNELS=0`` in the environment, for its child processes too)."""
    return LEAN_KERNELS and bool(np.all(np.asarray(jtype) <= SIMPLE_MAX))


NO_FEXT = np.zeros((0, 6))  # "no external wrenches": read-only, the type of a constant inside the kernels
NO_FEXT.flags.writeable = False


