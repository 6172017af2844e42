"""First-order derivatives against Pinocchio's computeRNEADerivatives and computeABADerivatives (1e-9 relative)
on example-robot-data robots, seeded random chains and trees (fixed base), floating-base robots and random
models with spherical and free joints (tangent rates through ``DofMap(..., tangent=True)``), and with external
wrenches."""

import numpy as np
import pinocchio as pin
import pytest

import redmax as rm
from derivative_models import rel, sym
from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.testing.models import random_axis, random_model, random_placement, random_state
from redmax.testing.pinocchio_bridge import DofMap, to_pinocchio
from redmax.testing.robots import robot_urdf

from tolerances import PIN_REL

FIXED_BASE = ["ur5", "ur10", "panda", "kinova", "z1", "double_pendulum"]
FLOATING = ["solo12", "anymal", "talos"]


def _fext_pin(model, pm, f_body):
    """Our body-frame wrenches as Pinocchio's per-joint forces in the joint frames (linear first)."""
    out = pin.StdVec_Force()
    out.append(pin.Force.Zero())
    for jn in pm.names[1:]:
        i = model.joint_names.index(jn)
        fj = model.Ad_bj[i].T @ f_body[i]
        out.append(pin.Force(fj[3:], fj[:3]))
    return out


def _check(model, pm, rng, tangent=False, states=2, fext=False):
    pd = pm.createData()
    mp = DofMap(model, pm, tangent=tangent)
    for _ in range(states):
        q, qd = random_state(rng, model)
        q *= 0.7
        qdd, tau = rng.normal(size=(2, model.ndof))
        f = rng.normal(size=(model.nb, 6)) if fext else None
        args = (_fext_pin(model, pm, f),) if fext else ()
        qp = mp.q_pin(q)
        dq, dv, _ = pin.computeRNEADerivatives(pm, pd, qp, mp.vec(qd), mp.vec(qdd), *args)
        ours = rm.rnea_derivatives(model, q, qd, qdd, f_ext=f, tangent=tangent, jstate=model.jstate0)
        assert rel(ours[0], mp.mat(dq)) < PIN_REL and rel(ours[1], mp.mat(dv)) < PIN_REL
        aq, av, Minv = pin.computeABADerivatives(pm, pd, qp, mp.vec(qd), mp.vec(tau), *args)
        ours = rm.aba_derivatives(model, q, qd, tau, f_ext=f, tangent=tangent, jstate=model.jstate0)
        assert rel(ours[0], mp.mat(aq)) < PIN_REL and rel(ours[1], mp.mat(av)) < PIN_REL
        assert rel(ours[2], mp.mat(sym(Minv))) < PIN_REL


@pytest.mark.parametrize("name", FIXED_BASE)
def test_fixed_base_robots(name):
    path = robot_urdf(name)
    _check(rm.load_urdf(path), pin.buildModelFromUrdf(path), np.random.default_rng(1))


@pytest.mark.parametrize("topology,n", [("chain", 12), ("chain", 36), ("binary-dfs", 15), ("binary-dfs", 31)])
def test_random_chains_and_trees(topology, n):
    rng = np.random.default_rng(n)
    model = random_model(rng, n=n, topology=topology, joints="revprism", gravity=(0.2, -0.3, -9.81))
    _check(model, to_pinocchio(model), rng)


def test_external_wrenches():
    path = robot_urdf("panda")
    _check(rm.load_urdf(path), pin.buildModelFromUrdf(path), np.random.default_rng(3), fext=True)


@pytest.mark.parametrize("name", FLOATING)
def test_floating_base_robots_in_tangent_rates(name):
    """Pinocchio's free-flyer velocity [v; w] is our body twist [w; v] (tangent=True)."""
    path = robot_urdf(name)
    _check(rm.load_urdf(path, floating_base=True), pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()),
           np.random.default_rng(7), tangent=True)


def _spherical_model(rng, n=10, rotation="exp"):
    """A random tree numbered depth-first (Pinocchio's derivative algorithms need contiguous subtrees): the
    parent of body k is a random body on the path from the root to body k-1."""
    b = ModelBuilder("spherical-tree", (0.0, 0.3, -9.81))
    names = []
    path: list[int] = []
    for k in range(n):
        if k == 0:
            j = rm.Free3D(rotation, "ZYX")
        else:
            j = [rm.Revolute(random_axis(rng)), rm.Prismatic(random_axis(rng)), rm.SphericalExp(),
                 rm.SphericalEuler("YXZ"), rm.Fixed()][k % 5]
        cut = int(rng.integers(0, len(path))) if k else 0
        parent = names[path[cut]] if k else None
        path = [*path[:cut + 1], k]
        b.add_body(f"b{k}", Cuboid(*rng.uniform(0.3, 1.5, 3)), j, parent=parent,
                   joint_placement=random_placement(rng, 0.5), body_placement=random_placement(rng, 0.3))
        names.append(f"b{k}")
    return b.build()


@pytest.mark.parametrize("rotation", ["exp", "euler"])
def test_spherical_and_free_joints_in_tangent_rates(rotation):
    rng = np.random.default_rng(9)
    model = _spherical_model(rng, 11, rotation)
    _check(model, to_pinocchio(model), rng, tangent=True, fext=False)


def test_bridge_maps_tensors_of_the_free_flyer():
    """``DofMap.tensor`` puts a Pinocchio-ordered (linear-first free flyer) tensor into our order, consistently
    with ``vec``/``back``/``mat``."""
    rng = np.random.default_rng(2)
    path = robot_urdf("solo12")
    model = rm.load_urdf(path, floating_base=True)
    mp = DofMap(model, pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()), tangent=True)
    ours = rng.normal(size=(model.ndof,) * 3)
    pin_order = np.empty_like(ours)
    pin_order[np.ix_(mp.v, mp.v, mp.v)] = ours
    assert np.array_equal(mp.tensor(pin_order), ours)
    x = rng.normal(size=model.ndof)
    assert np.array_equal(mp.back(mp.vec(x)), x) and np.array_equal(mp.vec(x)[mp.v[3:6]], x[3:6])
    assert list(mp.v[:6] - mp.v[0]) == [0, 1, 2, -3, -2, -1]
