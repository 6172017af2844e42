"""Deformable bodies coupled with a rigid link: a rope (mass-spring strand) and a soft FEM tail on a pendulum.

Run: python examples/deformable_bodies.py
"""

import numpy as np

import redmax as rm
from redmax.deformables import FEM, Strand
from redmax.spatial import trans

b = rm.ModelBuilder("pendulum_with_tail", gravity=(0, 0, -9.81))  # SI units
b.add_body("link", rm.Cuboid(0.3, 0.05, 0.05, density=1000), rm.Revolute((0, 1, 0)), body_placement=trans(0.15, 0, 0))
# a rope from a fixed world point to the link's tip: 6 nodes, implicit springs, the end nodes held by rows
b.add_deformable(Strand("rope", [("world", (0.3, 0.0, 0.3)), ("link", (0.15, 0.0, 0.0))], nodes=6,
                        stiffness=200.0, mass=0.05, damping=0.01, implicit=True))
# a soft tail: a 10-node tetrahedral mesh whose nodes at the link's tip move with the link (eliminated)
b.add_deformable(FEM("tail", {"box": [0.3, 0.05, 0.05], "divisions": [3, 1, 1]}, element="tet10",
                     material="neo_hookean", young=2e5, poisson=0.3, density=500.0, rayleigh=(0.0, 2e-3),
                     placement=trans(0.45, 0, 0), coupling="eliminate",
                     attach=[{"body": "link", "within": [[0.14, -1, -1], [0.16, 1, 1]]}]))
model = b.build()
print(model.describe())
print("DOFs:", model.ndof, "- the first node coordinates:", model.dof_names[1:4])

res = rm.simulate(model, integrator="euler", dt=2e-3, duration=1.0)
print("pendulum angle at the end:", round(float(res.q[-1, 0]), 4))
print("energies at the end:", {k: round(float(v[-1]), 5) for k, v in res.energy.items()})
tail = model.deformables[1]
tip = tail.positions(model, res.q[-1])[np.argmax(tail.X[:, 0])]
print("tail tip at the end:", np.round(tip, 4))
print("rope's attachment rows held to:", max(float(np.abs(v).max()) for v in res.constraint_violation.values()))
