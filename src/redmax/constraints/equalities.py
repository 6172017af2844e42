"""Equalities between joint coordinates: reduced equality rows (notes Eqs. 2.107-2.108).

* :class:`JointRatio` -- couplers and gears: ``q_B = ratio q_A`` per DOF (joints of equal size), rows
  ``g = ratio q_A - q_B``, ``G`` = ratio in A's column and -1 in B's.  The same relation can
  instead eliminate B's coordinates: ``ModelBuilder.couple`` (hyper-reduced coordinates).
* :class:`Linear` -- ``sum_i c_i q_i = value`` over coordinates named by 1-DOF joints or DOF names.

The reaction is the generalized force ``-G_r^T lam / h`` on the listed coordinates.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.constraints.base import Constraint, joint_dofs, joint_index
from redmax.errors import ModelError

__all__ = ["JointRatio", "Linear", "coordinate_index"]


def coordinate_index(model, con: Constraint, name, field: str) -> int:
    """The coordinate named ``name``: a 1-DOF joint's name or an entry of the model's coordinate names."""
    if not isinstance(name, str):
        raise con.err(field, f"expected a joint or DOF name, got {name!r}")
    if name in model.joint_names:
        i = model.joint_names.index(name)
        d = joint_dofs(model, i)
        if d.size != 1:
            raise con.err(field, f"joint '{name}' has {d.size} DOFs; name one of its DOFs "
                          f"({', '.join(coordinate_names(model)[k] for k in d)})")
        return int(d[0])
    names = coordinate_names(model)
    if name in names:
        return names.index(name)
    raise con.err(field, f"unknown joint or DOF '{name}'")


def coordinate_names(model) -> list:
    dofs = model.dofs
    return list(getattr(dofs, "coord_names", None) or dofs.dof_names)


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_joint_ratio(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
                     row):
    """``f q_a - q_b = 0`` for each pair of listed DOFs."""
    nd = ci[io]
    f = cf[fo]
    for k in range(nd):
        da = ci[io + 1 + k]
        db = ci[io + 1 + nd + k]
        g[row] = f * q[da] - q[db]
        if mode < 2:
            G[row, da] += f
            G[row, db] -= 1.0
        row += 1
    return row


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_linear(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
                row):
    """``sum_k c_k q_k - b = 0``, one row."""
    nt = ci[io]
    s = -cf[fo]
    for k in range(nt):
        d = ci[io + 1 + k]
        s += cf[fo + 1 + k] * q[d]
        if mode < 2:
            G[row, d] += cf[fo + 1 + k]
    g[row] = s
    row += 1
    return row


class JointRatio(Constraint):
    """``q_B = ratio q_A`` (one reduced equality row per DOF).

    Args:
        joints: ``[A, B]`` joint names (same number of DOFs).  ratio: the factor f.
    """

    type = "joint_ratio"
    code = 5
    rows = rows_joint_ratio
    fields = ("joints", "ratio")

    def __init__(self, joints, ratio, *, name: str | None = None):
        super().__init__(name)
        if not isinstance(joints, list | tuple) or len(joints) != 2:
            raise self.err("joints", f"expected two joint names [A, B], got {joints!r}")
        self.joints = list(joints)
        try:
            self.ratio = float(ratio)
        except (TypeError, ValueError):
            raise self.err("ratio", f"expected a number, got {ratio!r}") from None
        if isinstance(ratio, bool) or not np.isfinite(self.ratio):
            raise self.err("ratio", f"expected a finite number, got {ratio!r}")

    def _bind(self, model):
        ia = joint_index(model, self, self.joints[0], "joints[0]")
        ib = joint_index(model, self, self.joints[1], "joints[1]")
        if ia == ib:
            raise self.err("joints", "the two joints are the same")
        self.da, self.db = joint_dofs(model, ia), joint_dofs(model, ib)
        if self.da.size != self.db.size or self.da.size == 0:
            raise self.err("joints", f"joints '{self.joints[0]}' and '{self.joints[1]}' need the same, non-zero "
                           f"number of DOFs (got {self.da.size} and {self.db.size})")
        self.nrows = int(self.da.size)
        names = coordinate_names(model)
        self.react_labels = tuple(names[d] for d in (*self.da, *self.db))
        self.row_labels = tuple(f"{self.name}[{k}]" for k in range(self.nrows))

    def encode(self):
        return [self.nrows, *self.da, *self.db], [self.ratio]


class Linear(Constraint):
    """``sum_i coefficients[i] q[joints[i]] = value`` (one reduced equality row).

    Args:
        joints: names of 1-DOF joints or of coordinates (``model.dof_names`` entries).  coefficients: one per
            joint.  value: the right-hand side (default 0).
    """

    type = "linear"
    code = 6
    rows = rows_linear
    fields = ("joints", "coefficients", "value")

    def __init__(self, joints, coefficients, value=0.0, *, name: str | None = None):
        super().__init__(name)
        if not isinstance(joints, list | tuple) or not joints:
            raise self.err("joints", f"expected a non-empty list of joint names, got {joints!r}")
        try:
            c = np.asarray(coefficients, dtype=float).reshape(-1)
            v = float(value)
        except (TypeError, ValueError):
            raise self.err("coefficients", f"expected numbers, got {coefficients!r} and value {value!r}") from None
        if c.size != len(joints):
            raise self.err("coefficients", f"expected {len(joints)} coefficients (one per joint), got {c.size}")
        if not (np.all(np.isfinite(c)) and np.isfinite(v)) or not np.any(c != 0):
            raise ModelError(f"constraint '{self.name}' (linear): coefficients must be finite and not all zero, and "
                             "value finite")
        self.joints, self.coefficients, self.value = list(joints), c, v
        self.nrows = 1

    def _bind(self, model):
        self.dofs = np.array([coordinate_index(model, self, j, f"joints[{k}]") for k, j in enumerate(self.joints)],
                             dtype=np.int64)
        if np.unique(self.dofs).size != self.dofs.size:
            raise self.err("joints", "a coordinate is listed twice")
        names = coordinate_names(model)
        self.react_labels = tuple(names[d] for d in self.dofs)
        self.row_labels = (self.name,)

    def encode(self):
        return [self.dofs.size, *self.dofs], [self.value, *self.coefficients]
