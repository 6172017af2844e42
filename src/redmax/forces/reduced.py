"""Reduced forces acting on joint coordinates: nonlinear joint springs and penalty joint limits.

(Linear joint springs and joint damping are model fields, see ``ModelBuilder.add_body``.)
Sueda notes §2.5: a reduced force enters ``fr`` with ``Kr = dfr/dq`` and ``Dr = -dfr/dqd``.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._validate import check_nonneg, check_vector, plain
from redmax.errors import ModelError
from redmax.forces._compiled import F_JOINT_LIMIT
from redmax.forces._points import MODE_FULL
from redmax.forces.base import DofBlocks, Force, ForceOutput

__all__ = ["JointForce", "JointLimit", "NonlinearJointSpring"]


@njit(cache=True, inline="always")  # compiled into the step's force loop
def kernel_joint_limit(fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK,
                       rD, energy, scratch, ppair, prec, pairs_on, nblk, npair):
    """Penalty limits per listed DOF (ints [nd, dofs...], floats [lower (nd), upper (nd), k, d])."""
    nd = fi[io]
    k = ff[fo + 2 * nd]
    d = ff[fo + 2 * nd + 1]
    for m in range(nd):
        a = fi[io + 1 + m]
        lo = ff[fo + m]
        hi = ff[fo + nd + m]
        if q[a].real > hi:
            ea = q[a] - hi
        elif q[a].real < lo:
            ea = q[a] - lo
        else:
            continue
        fr[a] += -k * ea - d * qd[a]
        if want_blocks:
            rK[a] -= k
            rD[a] += d
        if bucket >= 0:
            energy[bucket] += 0.5 * k * (ea * ea).real
    return nblk, npair


class JointForce(Force):
    """Base class of forces on the coordinates of one joint (bound by joint name)."""

    space = "reduced"

    def __init__(self, joint: str, name: str):
        self.joint = joint
        self.name = name
        self.dofs: np.ndarray | None = None

    def bind_joints(self, model) -> None:
        if self.joint not in model.joint_names:
            raise ModelError(f"force '{self.name}': unknown joint '{self.joint}'")
        i = model.joint_names.index(self.joint)
        self.dofs = np.arange(model.idx[i], model.idx[i + 1])
        if self.dofs.size == 0:
            raise ModelError(f"force '{self.name}': joint '{self.joint}' has no degrees of freedom")
        self.check(self.dofs.size)

    def check(self, n: int) -> None:
        """Validate parameters for a joint with n DOFs."""

    def initialize(self, model, kin) -> None:
        """Hook called with the initial kinematics; default: nothing."""


class NonlinearJointSpring(JointForce):
    """Joint spring ``tau = f(q - rest)`` with its derivative ``df/dq`` (n, n) given as callables.

    Args:
        f: callable e (n,) -> tau (n,).  df: callable e -> (n, n).
        potential: optional callable e -> V (energy bucket "joint_springs").
        rest: rest coordinates (default: the initial q).
    """

    energy_key = "joint_springs"

    def __init__(self, joint: str, f, df, potential=None, rest=None, name: str | None = None):
        super().__init__(joint, name or f"spring@{joint}")
        if not callable(f) or not callable(df):
            raise ModelError(f"force '{self.name}': f and df must be callables")
        self.f, self.df, self.V, self.rest_in = f, df, potential, rest
        self.rest = None

    def check(self, n):
        if self.rest_in is not None:
            self.rest = check_vector(self.rest_in, n, f"force '{self.name}': rest")

    def initialize(self, model, kin):
        if self.rest is None:
            self.rest = model.q0[self.dofs].copy()

    def evaluate(self, model, kin, t: float = 0.0, want_K: bool = True, want_D: bool = True) -> ForceOutput:
        e = kin.q[self.dofs] - self.rest
        k = self.dofs.size
        tau = np.asarray(self.f(e)).reshape(-1)
        if tau.shape != (k,):
            raise ModelError(f"force '{self.name}': f must return {k} value(s), got shape {tau.shape}")
        f = np.zeros(model.ndof, dtype=np.result_type(tau, float))
        f[self.dofs] = tau
        K = D = None
        if want_K:
            dK = np.asarray(self.df(e))
            if dK.size != k * k:
                raise ModelError(f"force '{self.name}': df must return a ({k}, {k}) matrix, got shape {dK.shape}")
            K = DofBlocks(model.ndof)
            K.add(self.dofs, dK.reshape(k, k))
        if want_D:
            D = DofBlocks(model.ndof)
        V = 0.0 if self.V is None else float(np.real(self.V(kin.q.real[self.dofs] - self.rest)))
        return ForceOutput("reduced", f, K, D, energy=V)


class JointLimit(JointForce):
    """Penalty joint limits: beyond ``upper`` the torque is ``-k (q - upper) - d qd``, below ``lower``
    ``-k (q - lower) - d qd``; energy ``k/2 (violation)^2`` (bucket "springs").

    Args:
        lower, upper: per-DOF bounds (scalars broadcast; use -inf/inf for one-sided limits).
        stiffness, damping: penalty coefficients >= 0.
    """

    energy_key = "springs"
    code = F_JOINT_LIMIT
    kernel = kernel_joint_limit
    scene_type = "joint_limit"
    scene_keys = ("joint", "lower", "upper", "stiffness", "damping")
    scene_required = ("joint", "lower", "upper", "stiffness")

    def __init__(self, joint: str, lower, upper, stiffness: float, damping: float = 0.0, name: str | None = None):
        super().__init__(joint, name or f"limit@{joint}")
        self.args = (lower, upper, stiffness, damping)

    def check(self, n):
        lower, upper, k, d = self.args
        try:
            lo = np.broadcast_to(np.asarray(lower, dtype=float), (n,)).copy()
            hi = np.broadcast_to(np.asarray(upper, dtype=float), (n,)).copy()
        except (TypeError, ValueError):
            raise ModelError(f"force '{self.name}': lower and upper must be numbers or lists of {n} numbers (one per "
                             f"DOF of joint '{self.joint}'), got {plain(lower)!r} and {plain(upper)!r}") from None
        if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
            raise ModelError(f"force '{self.name}': need lower <= upper (no NaN), got {lo.tolist()}, {hi.tolist()}")
        self.lower, self.upper = lo, hi
        self.k = check_nonneg(k, f"force '{self.name}': stiffness")
        self.d = check_nonneg(d, f"force '{self.name}': damping")

    def program(self, model):
        nd = self.dofs.size
        ints = np.concatenate([[nd], self.dofs])
        return self.code, MODE_FULL, ints, np.concatenate([self.lower, self.upper, [self.k, self.d]]), (), 0

    @classmethod
    def from_scene(cls, read):
        return cls(read.string("joint"), read.array("lower", (None,)), read.array("upper", (None,)),
                   read.number("stiffness"), read.number("damping", 0.0), name=read.name)

    def to_scene(self):
        lower, upper, k, d = self.args
        return {"joint": self.joint, "lower": np.atleast_1d(np.asarray(lower, float)).tolist(),
                "upper": np.atleast_1d(np.asarray(upper, float)).tolist(), "stiffness": float(k), "damping": float(d)}
