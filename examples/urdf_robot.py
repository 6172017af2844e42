"""A robot from a URDF file: dynamics on one state, a link pose, and (if installed) Pinocchio's numbers.

Run: python examples/urdf_robot.py
"""

from pathlib import Path

import numpy as np

import redmax as rm

urdf = Path(__file__).parent / "data" / "arm.urdf"
model = rm.load_urdf(urdf)  # fixed base; links on fixed joints are merged into their parent body
print(model.nb, "bodies,", model.ndof, "DOFs:", model.dof_names)
print("limits:", model.meta["limits"]["shoulder"], " friction of 'yaw':", model.meta["friction"]["yaw"])

rng = np.random.default_rng(0)
q, qd, qdd = rng.normal(size=(3, model.ndof))
tau = rm.rnea(model, q, qd, qdd)  # inverse dynamics (gravity -9.81 z by default)
print("tau =", np.round(tau, 4))
print("ABA(RNEA(qdd)) - qdd:", np.abs(rm.aba(model, q, qd, tau) - qdd).max())
print("M^-1 M - I:", np.abs(rm.minv(model, q) @ rm.crba(model, q) - np.eye(model.ndof)).max())
print("camera pose in the world:\n", np.round(rm.link_pose(model, q, "camera"), 4))

# A body wrench on the last body (torque; force in its principal frame), e.g. a 5 N push along its x axis.
f_ext = np.zeros((model.nb, 6))
f_ext[-1, 3] = 5.0
print("extra torques for the push:", np.round(rm.rnea(model, q, qd, qdd, f_ext=f_ext) - tau, 4))

try:
    import pinocchio as pin
except ImportError:
    print("(pip install '.[test]' to compare with Pinocchio)")
else:
    from redmax.testing.pinocchio_bridge import DofMap

    pm = pin.buildModelFromUrdf(str(urdf))
    dm = DofMap(model, pm)  # joints matched by name; Pinocchio's continuous joints take (cos, sin) in q
    tau_pin = dm.back(pin.rnea(pm, pm.createData(), dm.q_pin(q), dm.vec(qd), dm.vec(qdd)))
    print("Pinocchio rnea - redmax rnea:", np.abs(tau_pin - tau).max())
