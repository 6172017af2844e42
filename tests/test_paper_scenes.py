"""The reconstructions of the paper's HAND and HAGFISH demos (scenes paper/hand, paper/hagfish)."""

import numpy as np
import pytest

import redmax as rm
from redmax.scenes.paper import FINGERS


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
def test_hagfish_never_interpenetrates_beyond_one_step_of_travel():
    s = rm.scenes.load("paper/hagfish")
    m = s.model
    assert m.ndof == 150 and m.nb == 101
    r = s.simulate(duration=1.0)
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
