"""Models and complex-step references shared by the derivative tests (not collected: no test_ prefix)."""

import types

import numpy as np

import redmax as rm
import redmax.dynamics.tangent as _tangent
from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.forces import (
    Cable,
    GenericSpring,
    GroundContact,
    JointLimit,
    MultiPointSpring,
    NonlinearJointSpring,
    PointSpring,
    SpringDamper,
    WorldPointForce,
)
from redmax.joints import Composite, Planar, Prismatic, SphericalEuler, SphericalExp, Universal
from redmax.testing.models import all_joint_kinds, random_axis, random_placement

from tolerances import CS_STEP, rel  # noqa: F401  (rel re-exported: the suite's one relative-error helper)


def every_kind(rng) -> list:
    """One instance of every joint family (the redundant composite of ``all_joint_kinds`` replaced by two
    regular ones, one with a spherical joint between prismatic joints)."""
    kinds = all_joint_kinds(rng)
    kinds[13] = Composite(Prismatic(random_axis(rng)), SphericalExp(), Prismatic(random_axis(rng)))
    kinds.append(Composite(Universal(), Prismatic(random_axis(rng)), Planar(random_axis(rng), random_axis(rng))))
    kinds.append(Composite(Prismatic(random_axis(rng)), SphericalEuler("ZXZ")))
    return kinds


def kinds_model(rng, n: int, topology: str = "chain", floating: bool = False):
    """A seeded model of n bodies cycling through :func:`every_kind` (chain or random tree)."""
    kinds = every_kind(rng)
    b = ModelBuilder(f"kinds-{topology}-{n}", (0.1, -0.2, -9.81))
    names = []
    for k in range(n):
        parent = None if k == 0 else (names[-1] if topology == "chain" else names[int(rng.integers(0, k))])
        j = rm.Free3D() if (k == 0 and floating) else kinds[k % len(kinds)]
        if j.kind == "spline_surface":
            q0 = rng.uniform(0.1, 0.9, 2)
        else:
            q0 = rng.normal(size=j.nq) if j.nq else None
        name = f"b{k}"
        b.add_body(name, Cuboid(*rng.uniform(0.3, 1.5, 3), density=rng.uniform(0.5, 2.0)), j, parent=parent,
                   joint_placement=random_placement(rng, 0.5), body_placement=random_placement(rng, 0.3), q=q0)
        names.append(name)
    return b.build()


def state(rng, model):
    """q (the model's initial q, valid for every joint), random qd, qdd, tau and external wrenches."""
    n = model.ndof
    return (model.q0.copy(), rng.normal(size=n), rng.normal(size=n), rng.normal(size=n),
            rng.normal(size=(model.nb, 6)))


def rms_rel(a, b) -> float:
    """RMS of the entrywise relative errors (Singh, Russell & Wensing Eq. 43)."""
    d = (a - b) / np.maximum(np.abs(b), 1.0)
    return float(np.sqrt(np.mean(d * d)))


def lie_directions(model, q, tangent: bool):
    """Coordinate directions (columns) whose complex step gives the derivative along each DOF: the unit
    vectors, or ``T^-1 e_k`` for tangent rates (a Lie derivative along a body-twist perturbation)."""
    if not tangent:
        return np.eye(model.ndof)
    T, _ = tangent_map(model, q)
    return np.linalg.inv(T)


def cs_first_order(f, x, directions):
    """Complex step of f (returning a tuple of arrays) along each column of ``directions`` from x:
    a list of arrays with a trailing axis over the directions."""
    cols = []
    for k in range(directions.shape[1]):
        cols.append([np.imag(v) / CS_STEP for v in f(x + 1j * CS_STEP * directions[:, k])])
    return [np.stack([c[i] for c in cols], axis=-1) for i in range(len(cols[0]))]


class _InitialCharts:
    """A module's functions with ``jstate=model.jstate0`` filled in when the model has Euler-angle joints and the
    call gives none: the test states are in the models' initial charts, and chart models require ``jstate`` in
    every dynamics call (``redmax.configuration.charts_for``).  Classes, modules and constants pass through."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        f = getattr(self._module, name)
        if not isinstance(f, types.FunctionType):
            return f

        def call(model, *args, **kw):
            if "jstate" not in kw and getattr(model, "chart_joints", np.zeros(0)).size:
                kw["jstate"] = model.jstate0
            return f(model, *args, **kw)

        return call


charted = _InitialCharts(rm)  # ``rm`` for the test models (see _InitialCharts)
tangent = _InitialCharts(_tangent)
tangent_map = tangent.tangent_map
tangent_rates = tangent.tangent_rates
model_rates = tangent.model_rates


def sym(M):
    """The symmetric matrix of M's upper triangle (Pinocchio's crba and computeMinverse fill only that)."""
    return np.triu(M) + np.triu(M, 1).T


def mass_matrix(model, q, tangent: bool):
    """M in the model's coordinates, or in tangent rates (T^-T M T^-1) (models with charts in their initial ones)."""
    M = charted.crba(model, q)
    if not tangent:
        return M
    Ti = np.linalg.inv(tangent_map(model, q)[0])
    return Ti.T @ M @ Ti


def cs_rnea_second_order(m, q, qd, qdd, fext=None, tangent=False):
    """Complex-step reference of ``rnea_second_order_derivatives``' four tensors (d2tau_dq2, d2tau_dqd2,
    d2tau_dqdqd, dM_dq) from the first-order derivatives and CRBA (in tangent rates along T^-1 e_k)."""
    D = lie_directions(m, q, tangent)
    dq_q, dM = cs_first_order(lambda x: (charted.rnea_derivatives(m, x, qd, qdd, f_ext=fext, tangent=tangent)[0],
                                         mass_matrix(m, x, tangent)), q, D)
    dq_v, dv_v = cs_first_order(lambda x: charted.rnea_derivatives(m, q, x, qdd, f_ext=fext, tangent=tangent), qd,
                                np.eye(m.ndof))
    return dq_q, dv_v, dq_v, dM


def central4(fun, x, k, step=1e-4):
    """Fourth-order central difference of fun along coordinate k."""
    def at(s):
        z = np.array(x, dtype=float)
        z[k] += s
        return np.asarray(fun(z))
    return (8.0 * (at(step) - at(-step)) - (at(2 * step) - at(-2 * step))) / (12.0 * step)


def regular_kinds(rng) -> list:
    """One joint of every family; the redundant composite of ``all_joint_kinds`` (singular inertia) becomes a regular
    one with a spherical joint between two prismatic joints."""
    kinds = all_joint_kinds(rng)
    kinds[13] = Composite(Prismatic(random_axis(rng)), SphericalExp(), Prismatic(random_axis(rng)))
    return kinds


def force_model():
    """A tree of mixed joints with every force of the library active at its state (contacts penetrating, the cable
    taut, joint limits violated), plus body damping, joint springs and joint damping."""
    rng = np.random.default_rng(7)
    kinds = regular_kinds(rng)
    b = ModelBuilder("forces", (0.3, -0.5, -9.81))
    picks = [1, 6, 9, 3, 7, 13, 5, 10]
    names = []
    for k, ki in enumerate(picks):
        j = kinds[ki]
        q0 = rng.uniform(0.2, 0.8, 2) if j.kind == "spline_surface" else 0.4 * rng.normal(size=j.nq)
        parent = None if k == 0 else names[int(rng.integers(0, k))]
        b.add_body(f"b{k}", Cuboid(*rng.uniform(0.5, 1.5, 3)), j, parent=parent,
                   joint_placement=random_placement(rng, 0.5), body_placement=random_placement(rng, 0.3), q=q0,
                   damping=0.3, stiffness=2.0, joint_damping=0.4)
        names.append(f"b{k}")
    m0 = b.build()
    x = [("b2", (0.2, 0.1, 0.3)), ("b4", (0.1, -0.2, 0.0)), ("b6", (0.0, 0.3, 0.1)), ("b7", (0.2, 0.0, -0.1))]
    b.add_force(PointSpring(x[0], x[1], ks=30.0, kd=2.0, name="ps"))
    b.add_force(SpringDamper((None, (1.0, 0.5, -0.3)), x[2], k=40.0, d=3.0, rest_length=0.5, name="sd"))
    b.add_force(Cable([x[3], x[1], x[0]], k=50.0, d=2.0, rest_length=0.2, name="cable"))
    b.add_force(WorldPointForce("b5", (0.1, 0.2, 0.3), (1.0, -2.0, 0.5), name="push"))
    b.add_force(GenericSpring(x[1], x[3], lambda l, ld: 7 * (l - 0.4) ** 3 + 0.5 * ld,
                              lambda l, ld: 21 * (l - 0.4) ** 2, lambda l, ld: 0.5, name="gs"))
    b.add_force(MultiPointSpring([x[0], x[2], x[3]], lambda l, ld: 3 * l + 0.2 * ld * l, lambda l, ld: 3 + 0.2 * ld,
                                 lambda l, ld: 0.2 * l, name="mps"))
    b.add_force(NonlinearJointSpring("b1", lambda e: 2 * np.sin(e), lambda e: np.diag(2 * np.cos(e)), rest=[0.0] * 3,
                                     name="nl"))
    qlim = m0.q0[m0.idx[3]]
    b.add_force(JointLimit("b3", qlim + 0.2, qlim + 0.5, stiffness=80.0, damping=3.0, name="limit"))
    corners = [(f"b{k}", (0.3, 0.2, -0.4)) for k in range(8)]
    b.add_force(GroundContact(corners, kn=200.0, kd=5.0, kt=40.0, mu=0.6, normal=(0.1, 0.2, 1.0),
                              origin=(0.0, 0.0, 0.0), name="ground"))
    return b.build()
