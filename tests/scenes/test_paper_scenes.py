"""The reconstructions of the paper's HAND and HAGFISH demos (scenes paper/hand, paper/hagfish)."""

import numpy as np
import pytest

import redmax as rm
from redmax.scenes.paper import FINGERS, hagfish_centerline
from redmax.testing.knots import closure, knot_determinant


def test_hand_dofs_are_hyper_reduced_and_the_dip_follows_half_the_pip_exactly():
    s = rm.scenes.load("paper/hand")
    m = s.model
    for f in FINGERS:
        assert f"{f}.pip" in m.dof_names and f"{f}.dip" not in m.dof_names
        assert f"{f}.dip" in m.dofs.coord_names
    assert m.ndof == 1 + 4 * 3 + 4 and m.ncoord == m.ndof + 4
    r = s.simulate()
    assert r.meta["compiled"]
    names = m.dofs.coord_names
    for q in r.q:
        qj = m.dofs.expand(q)
        for f in FINGERS:
            assert qj[names.index(f"{f}.dip")] == 0.5 * qj[names.index(f"{f}.pip")]
    # the elbow follows its profile, the fingertips their targets, and the drive torque and tip wrenches exist
    elbow = m.constraints[0]
    x = np.array([elbow.profile.evaluate(t)[0][0] for t in r.t])
    xd = np.array([elbow.profile.evaluate(t)[1][0] for t in r.t])
    # velocity-level tracking with the target at the end of the step leads the target by h qdot*
    assert np.abs(r.q[:, m.dof_names.index("elbow")] - x).max() < 1.05 * s.dt * np.abs(xd).max()
    for c in m.constraints[1:]:  # the same lead of h times the target's speed
        speed = np.abs(np.diff(c.profile.values, axis=0) / np.diff(c.profile.times)[:, None]).max()
        assert np.abs(r.constraint_violation[c.name]).max() < 1.05 * s.dt * speed, c.name
        assert np.abs(r.reactions[c.name][1:]).max() > 0.0
    assert np.abs(r.reactions["elbow"][1:]).max() > 1e4


@pytest.mark.slow
def test_hagfish_ties_an_overhand_knot_without_interpenetration():
    """The whole run: the body starts unknotted (knot determinant 1) and ends in a trefoil (3, the overhand knot),
    the collision spheres never overlap by more than one step's travel, and they do touch."""
    s = rm.scenes.load("paper/hagfish")
    m = s.model
    assert m.ndof == 150 and m.nb == 101
    r = s.simulate()
    d = r.meta["min_distance"]
    assert d.shape == r.t.shape and np.all(np.isfinite(d))
    # one step's travel: the largest displacement of a collision sphere centre between samples
    coll = next(c for c in m.constraints if c.type == "self_collision")
    P = []
    for q in r.q:
        _, E = rm.forward_kinematics(m, q)
        P.append(E[coll.bodies, :3, 3])
    P = np.array(P)
    travel = np.linalg.norm(np.diff(P, axis=0), axis=2).max()
    assert d.min() >= -travel
    assert d.min() < coll.margin  # the body does come into contact with itself
    knots = [knot_determinant(hagfish_centerline(m, r.q[k], r.jstate[k]), closed=False, directions=5)
             for k in (0, r.t.size // 2, r.t.size - 1)]
    assert knots[0] == 1 and knots[-1] == 3, knots


def test_knot_determinant_of_known_knots():
    """Trefoil 3, figure-eight 5, circle 1 (several projections each); an open trefoil-shaped rope closed far
    away is still a trefoil, an open straight-ish curve is not."""
    t = np.linspace(0.0, 2 * np.pi, 300, endpoint=False)
    trefoil = np.stack([np.sin(t) + 2 * np.sin(2 * t), np.cos(t) - 2 * np.cos(2 * t), -np.sin(3 * t)], 1)
    eight = np.stack([(2 + np.cos(2 * t)) * np.cos(3 * t), (2 + np.cos(2 * t)) * np.sin(3 * t), np.sin(4 * t)], 1)
    circle = np.stack([np.cos(t), np.sin(t), 0.1 * np.sin(5 * t)], 1)
    for seed in range(3):
        assert knot_determinant(trefoil, seed=seed) == 3
        assert knot_determinant(eight, seed=seed) == 5
        assert knot_determinant(circle, seed=seed) == 1
    # open: cut the trefoil at its outermost point and pull both ends out radially
    k = int(np.argmax(np.linalg.norm(trefoil, axis=1)))
    rope = np.roll(trefoil, -k, axis=0)[1:]
    head = [rope[0] * (1 + s) for s in np.linspace(0.5, 0.05, 5)]
    tail = [rope[-1] * (1 + s) for s in np.linspace(0.05, 0.5, 5)]
    rope = np.vstack([head, rope, tail])
    assert knot_determinant(rope, closed=False) == 3
    assert closure(rope).shape[0] > rope.shape[0]
    helix = np.stack([np.cos(t), np.sin(t), 0.3 * t], 1)
    assert knot_determinant(helix, closed=False) == 1
    with pytest.raises(rm.RedmaxError, match="knot_determinant"):
        knot_determinant(np.zeros((2, 3)))
