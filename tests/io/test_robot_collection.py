"""Issue 11, item 1 over the whole collection: every URDF shipped by example-robot-data (and pybullet_data, when
pybullet is installed) that Pinocchio loads also loads here and agrees with Pinocchio's rnea, aba and crba to 1e-9
relative at a random state, fixed and floating base (aba of an ill-conditioned M, icub's, to cond(M) * 1e-15 with a
backward error below 1e-12: see redmax.testing.robot_sweep).  The one allowed exception is a joint-space inertia that is
singular in Pinocchio too: refused with a ModelError naming the joint.  A file Pinocchio cannot read (with
pybullet_data, 8: xacro left-overs, malformed numbers or XML, a 'spherical' joint type) is refused here too, with a
ModelError naming the file.  (benchmarks/robots_sweep.py runs the same check with more states and pybullet's
random objects.)"""

import warnings

import pytest

pytest.importorskip("pinocchio")

import redmax as rm
from redmax.testing.robot_sweep import FAILURES, check_file
from redmax.testing.robots import all_urdfs, robots_root

FILES = all_urdfs()


def test_the_collection_is_there():
    """example-robot-data is a test extra: its robots must be found (so the sweep below cannot pass empty)."""
    robots_root()
    assert sum(label.startswith("erd:") for label, _ in FILES) >= 60


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("label,path", FILES, ids=[lb for lb, _ in FILES])
def test_every_file_pinocchio_loads_agrees(label, path, floating):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RedmaxWarnings are checked in test_robot_files.py
        outcome, detail, _ = check_file(path, floating, states=1, seed=11)
    assert outcome not in FAILURES, f"{label}: {outcome}: {detail}"
    if outcome == "singular":  # the exception stays the exception: the error names the joint
        assert "joint '" in detail, detail
    elif outcome == "pinocchio-refuses":  # nothing to compare with: the file must be refused here too, by name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(rm.ModelError) as refused:
                rm.load_urdf(path, floating_base=floating)
        assert str(refused.value).startswith(f"{path}: "), f"{label}: Pinocchio: {detail}; redmax: {refused.value}"
    else:
        assert outcome in ("agree", "agree-cond"), f"{label}: {outcome}: {detail}"
