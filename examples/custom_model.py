"""Build a model with the builder API: several joint types, joint springs, damping and a torque.

Run: python examples/custom_model.py
"""

import numpy as np

import redmax as rm
from redmax.spatial import make_E, rot_x, trans

b = rm.ModelBuilder("crane", gravity=(0, 0, -9.81))  # SI units
b.add_body("cart", rm.Cuboid(1.0, 0.6, 0.2, density=500), rm.Prismatic((1, 0, 0)), joint_name="rail",
           joint_damping=5.0, torque=lambda t: [20.0 * np.sin(2 * t)])  # a force along the rail
b.add_body("boom", rm.Cylinder(0.05, 2.0, density=2000), rm.Universal(), parent="cart", joint_name="hinge",
           body_placement=trans(0, 0, -1.0), q=[0.3, 0.0], stiffness=50.0)
b.add_body("hook", rm.Sphere(0.1, density=7800), rm.SphericalExp(), parent="boom", joint_name="swivel",
           joint_placement=make_E(rot_x(0.1), (0, 0, -2.0)), body_placement=trans(0, 0, -0.3))
model = b.build()
print(model.describe())

res = rm.simulate(model, integrator="euler", dt=1e-3, duration=2.0)
print("final q:", np.round(res.q[-1], 4))
print("energies at the end:", {k: round(float(v[-1]), 4) for k, v in res.energy.items()})

# The same model, integrated adaptively through the recursive forward dynamics.
res2 = rm.simulate(model, integrator="rk45", dt=1e-2, duration=2.0, method="recursive", rtol=1e-9, atol=1e-9)
print("Euler vs RK45 final cart position:", res.q[-1, 0], res2.q[-1, 0])
