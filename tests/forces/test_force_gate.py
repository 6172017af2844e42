"""A model without forces compiles no force kernel: its force program's header is writeable (the tag that
``redmax._kernels.dispatch.lean_gate`` reads), every other program's is read-only, and the loops' gated call
answers "no forces" for the writeable type only."""

import numpy as np
import pytest

import redmax as rm
from redmax.forces import model_forces
from redmax.forces.program import build_program
from redmax.forces.registry import _no_forces, eval_forces_gated
from redmax.spatial import trans


def _pendulum(spring: bool):
    b = rm.ModelBuilder("pendulum", gravity=(0, 0, -9.81))
    b.add_body("a", rm.Cuboid(0.2, 0.02, 0.02, density=1000), rm.Revolute((0, 1, 0)), body_placement=trans(0.1, 0, 0),
               q=[0.4])
    b.add_body("b", rm.Cuboid(0.2, 0.02, 0.02, density=1000), rm.Revolute((0, 1, 0)), parent="a",
               joint_placement=trans(0.2, 0, 0), body_placement=trans(0.1, 0, 0))
    if spring:
        b.add_force(rm.forces.PointSpring((None, (0.3, 0.0, -0.2)), ("b", (0.1, 0.0, 0.0)), ks=50.0, name="s"))
    return b.build()


def test_the_header_says_whether_there_are_forces(lean_kernels):
    bare, sprung = _pendulum(False), _pendulum(True)
    p0, p1 = (build_program(m, model_forces(m)) for m in (bare, sprung))
    assert p0.hdr.shape[0] == 0 and p0.hdr.flags.writeable
    assert p1.hdr.shape[0] == 1 and not p1.hdr.flags.writeable
    for m, p in ((bare, p0), (sprung, p1)):
        sim = rm.Simulator(m, dt=1e-3)
        assert sim._PI.flags.writeable == p.hdr.flags.writeable


def test_the_spring_acts_in_every_loop_and_the_bare_model_matches_its_own_equations(lean_kernels):
    """The sprung pendulum's loops evaluate the spring (its result differs from the bare one's), and the bare
    pendulum's Euler loop equals the Simulator's steps (both through the no-force branch) to rounding."""
    bare, sprung = _pendulum(False), _pendulum(True)
    rb = rm.simulate(bare, dt=1e-3, duration=0.2)
    rs = rm.simulate(sprung, dt=1e-3, duration=0.2)
    assert np.abs(rb.q[-1] - rs.q[-1]).max() > 1e-3
    for m, r in ((bare, rb), (sprung, rs)):
        sim = rm.Simulator(m, dt=1e-3)
        for _ in range(200):
            sim.step()
        np.testing.assert_allclose(sim.q, r.q[-1], rtol=1e-12, atol=1e-12)
    assert rs.energy["total"][0] != rb.energy["total"][0]  # the spring's energy is counted


def test_the_no_force_branch_refuses_a_program_with_forces():
    hdr = np.ones((1, 8), dtype=np.int64)
    with pytest.raises(ValueError, match="writeable header"):
        _no_forces(hdr, 0)
    assert eval_forces_gated.__redmax_source__.startswith("def eval_forces_gated(hdr, ")
