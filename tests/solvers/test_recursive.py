"""solver="recursive": the Euler step solved directly by the articulated-body recursion (the PCG preconditioner of
RedMax paper Eq. 3 / Alg. 1, which is A itself when no force joins two moving bodies): against the dense solve on a
branching tree with every multi-DOF joint family, on the compiled, Python, Simulator, rollout and constrained paths;
the refusal of a force between two moving bodies by name; and what "auto" takes."""

import numpy as np
import pytest

import redmax as rm
from redmax import scenes
from redmax.bodies import Cuboid
from redmax.forces.maximal import PointSpring
from redmax.integrators.euler import linearized_step
from redmax.joints import Fixed, Free3D, Prismatic, Revolute, SphericalExp, Universal
from redmax.solvers import RecursiveSolver
from redmax.spatial import trans
from redmax.testing.benchmark_models import benchmark_chain

from tolerances import rel


def _tree(springs_between: bool = False):
    """A floating base with two branches (spherical, universal, revolute, prismatic joints, a welded block), joint
    springs and dampers, body damping, a spring to the world; with ``springs_between`` also one between the
    branches' tips."""
    b = rm.ModelBuilder("tree", gravity=(0.0, 0.0, -9.81))
    box = Cuboid(0.2, 0.05, 0.05, density=1000.0)
    b.add_body("base", Cuboid(0.3, 0.2, 0.1, density=1000.0), Free3D(), q=[0.1, -0.2, 0.3, 0.2, -0.1, 0.05],
               damping=0.05)
    for side, y in (("l", 0.12), ("r", -0.12)):
        b.add_body(f"{side}1", box, SphericalExp(), parent="base", joint_placement=trans(0.0, y, 0.0),
                   body_placement=trans(0.1, 0, 0), q=[0.1, 0.2, -0.3], stiffness=0.5, joint_damping=0.02)
        b.add_body(f"{side}2", box, Universal(), parent=f"{side}1",
                   joint_placement=trans(0.2, 0, 0), body_placement=trans(0.1, 0, 0), q=[0.3, -0.2],
                   joint_damping=0.01)
        b.add_body(f"{side}3", box, Revolute((1, 0, 0)), parent=f"{side}2", joint_placement=trans(0.2, 0, 0),
                   body_placement=trans(0.1, 0, 0), q=[0.4], stiffness=0.2, rest=[0.1])
        b.add_body(f"{side}4", box, Prismatic((1, 0, 0)), parent=f"{side}3", joint_placement=trans(0.2, 0, 0),
                   body_placement=trans(0.1, 0, 0), q=[0.02], stiffness=5.0, joint_damping=0.1)
        b.add_body(f"{side}5", box, Fixed(), parent=f"{side}4", joint_placement=trans(0.2, 0, 0),
                   body_placement=trans(0.1, 0, 0))
    b.add_force(PointSpring(("l5", (0.1, 0.0, 0.0)), ("world", (0.5, 0.5, 0.0)), ks=20.0, kd=0.5, name="tether"))
    if springs_between:
        b.add_force(PointSpring(("l5", (0.1, 0.0, 0.0)), ("r5", (0.1, 0.0, 0.0)), ks=20.0, name="tips"))
    return b.build()


def test_the_recursive_solve_is_the_dense_solve_of_the_step():
    """At random states the recursion's x solves A x = b to rounding (A formed densely, independently)."""
    m = _tree()
    rng = np.random.default_rng(1)
    for _ in range(5):
        st = rm.State(m.q0 + 0.3 * rng.normal(size=m.ndof), rng.normal(size=m.ndof), 0.0, m.jstate0)
        step = linearized_step(m, st, 1e-2)
        x = RecursiveSolver().solve(step)
        A = step.dense()
        assert np.linalg.norm(A @ x - step.b) < 1e-12 * np.linalg.norm(A) * np.linalg.norm(x)
        assert rel(x, np.linalg.solve(A, step.b)) < 1e-10


def test_the_compiled_recursive_run_follows_the_dense_run():
    m = _tree()
    d = rm.simulate(m, dt=1e-3, duration=0.2, solver="dense")
    r = rm.simulate(m, dt=1e-3, duration=0.2, solver="recursive")
    assert r.meta["compiled"] and r.meta["solver"] == "recursive" and "pcg_iterations" not in r.meta
    assert rel(r.q, d.q) < 1e-10 and rel(r.qdot, d.qdot) < 1e-10
    assert np.max(np.abs(r.qdot[-1] - r.qdot[0])) > 0.1  # (it moved)


def test_the_simulator_and_rollouts_step_as_simulate_does():
    m = _tree()
    r = rm.simulate(m, dt=1e-3, duration=0.01, solver="recursive")
    sim = rm.Simulator(m, dt=1e-3, solver="recursive")
    for _ in range(10):
        sim.step()
    assert sim.solver.name == "recursive"
    assert np.array_equal(sim.qd, r.qdot[-1]) and np.array_equal(sim.q, r.q[-1])
    ro = rm.rollout(m, np.stack([m.q0, m.q0]), dt=1e-3, steps=10, solver="recursive", threads=1)
    assert np.array_equal(ro.q[1], r.q) and np.array_equal(ro.qdot[0], r.qdot)


def test_loops_are_closed_with_one_recursive_solve_per_row():
    """paper/simple_bridge: loop rows by the Schur complement, the dense run's trajectory and reactions."""
    s = scenes.load("paper/simple_bridge", n_deck=12)
    d = s.simulate(duration=0.1, solver="dense")
    r = s.simulate(duration=0.1, solver="recursive")
    assert d.meta["compiled"] and r.meta["compiled"]
    assert rel(r.qdot, d.qdot) < 1e-9 and rel(r.q, d.q) < 1e-9
    for k, v in d.reactions.items():
        assert rel(r.reactions[k], v) < 1e-8, k


def test_a_force_between_two_moving_bodies_is_refused_by_name():
    m = _tree(springs_between=True)
    with pytest.raises(rm.SimulationError, match="force 'tips' joins 'l5' and 'r5'"):
        rm.simulate(m, dt=1e-3, duration=0.01, solver="recursive")
    with pytest.raises(rm.SimulationError, match="force 'tips' joins"):
        rm.Simulator(m, dt=1e-3, solver="recursive")
    step = linearized_step(m, rm.State(m.q0, np.zeros(m.ndof), 0.0, m.jstate0), 1e-2)
    with pytest.raises(rm.SimulationError, match="joins 'l5' and 'r5'|joins 'r5' and 'l5'"):
        RecursiveSolver().solve(step)


@pytest.mark.parametrize("n,springs,expected", [(30, False, "recursive"), (10, False, "dense"),
                                                (30, True, "dense")])
def test_auto_takes_the_recursion_for_larger_models_without_coupling_forces(n, springs, expected):
    m, st = benchmark_chain(n, springs=springs)
    res = rm.simulate(m, st, dt=1e-3, duration=0.005)
    assert res.meta["solver"] == expected
    assert rm.Simulator(m, dt=1e-3).solver.name == expected
    d = rm.simulate(m, st, dt=1e-3, duration=0.005, solver="dense")
    assert rel(res.qdot, d.qdot) < 1e-10


def test_a_non_symmetric_step_is_refused_by_the_solvers_name():
    """The recursion assumes a symmetric step (as PCG): coriolis="implicit" and an exact, non-symmetric stiffness
    are refused, and the message names 'recursive'."""
    m = _tree()
    with pytest.raises(rm.SimulationError, match=r"the 'recursive' solver needs a symmetric step matrix; "
                                                 r"coriolis='implicit'"):
        rm.simulate(m, dt=1e-3, duration=0.01, solver="recursive", coriolis="implicit")
    b = rm.ModelBuilder("pushed", (0, 0, -9.81))
    b.add_body("a", rm.Cuboid(1, 1, 1), rm.Revolute((1, 0, 0)))
    b.add_force(rm.forces.WorldPointForce("a", (0, 0, 1), (1, 0, 0), stiffness="full"))
    with pytest.raises(rm.SimulationError, match=r"the 'recursive' solver needs a symmetric step matrix; a force"):
        rm.simulate(b.build(), dt=1e-2, duration=0.02, solver="recursive")


def test_a_reduced_block_across_joints_is_refused_by_dof_names():
    """A reduced term that couples two joints (possible from a Python force) makes the recursion inexact: the
    Python solve refuses it, naming the DOFs in plain words."""
    import dataclasses

    m = _tree()
    step = linearized_step(m, rm.State(m.q0, np.zeros(m.ndof), 0.0, m.jstate0), 1e-2)
    across = np.array([m.ndof - 2, m.ndof - 1])
    step = dataclasses.replace(step, rblocks=[(across, np.eye(2))])
    names = f"{m.dof_names[m.ndof - 2]}, {m.dof_names[m.ndof - 1]}"
    with pytest.raises(rm.SimulationError, match=f"couples the DOFs {names} "):
        RecursiveSolver().solve(step)
