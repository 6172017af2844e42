"""A robot of example-robot-data by name: its DOFs and the joint torques that hold it still against gravity.

Needs the robot files: pip install example-robot-data.  Runs from any folder:
    python examples/robot_by_name.py
"""

import numpy as np

import redmax as rm

print(len(rm.available_robots()), "robots installed, e.g.", ", ".join(list(rm.available_robots())[:5]), "...")

# The URDF of example-robot-data: SI units, fixed base, gravity -9.81 m/s^2 along z.  Panda's second finger
# mimics the first: it loads as an independent joint with a RedmaxWarning (mimic=True couples them: 8 DOFs).
model = rm.load_robot("panda")
print(model.name, "has", model.ndof, "DOFs:", model.dof_names)

q0 = model.q0  # the file's zero configuration
zero = np.zeros(model.ndof)
tau_g = rm.rnea(model, q0, zero, zero)  # inverse dynamics at rest: the gravity torques (N m; N on the fingers)
print("gravity torque at q0:", np.round(tau_g, 4) + 0.0)  # + 0.0: no "-0."

# The same robot from its file, and with a free-floating base (6 more DOFs: translation, rotation vector).
path = rm.robot_path("panda")
print(f"from {path}: {rm.load_urdf(path).ndof} DOFs; floating base: "
      f"{rm.load_robot('panda', floating_base=True).ndof} DOFs")
