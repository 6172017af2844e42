"""Forces with their own stiffness and damping, integrated implicitly, and the same chain in maximal coordinates.

Run: python examples/forces_and_maximal.py
"""

import numpy as np

import redmax as rm
from redmax import forces as fc
from redmax.spatial import trans

# A two-link arm (cm, g, s) hanging from a stiff spring-damper, with a cable and a box on the ground.
b = rm.ModelBuilder("arm and box", gravity=(0, 0, -980))
b.add_body("upper", rm.Cuboid(10, 1, 1), rm.Revolute((0, 1, 0)), body_placement=trans(5, 0, 0), q=[0.3])
b.add_body("lower", rm.Cuboid(10, 1, 1), rm.Revolute((0, 1, 0)), parent="upper", joint_placement=trans(10, 0, 0),
           body_placement=trans(5, 0, 0), joint_damping=50.0)
b.add_body("box", rm.Cuboid(4, 4, 4), rm.Free3D(), q=[15, 0, 2.5, 0, 0, 0])
b.add_force(fc.SpringDamper((None, (20.0, 0.0, 5.0)), ("lower", (5.0, 0.0, 0.0)), k=5e5, d=500.0,
                            rest_length=8.0, name="tether"))
b.add_force(fc.Cable([(None, (0.0, 0.0, 15.0)), ("upper", (0.0, 0.0, 0.5))], k=1e6, d=100.0, name="cable"))
corners = [(x, y, z) for x in (-2, 2) for y in (-2, 2) for z in (-2, 2)]
b.add_force(fc.GroundContact([("box", c) for c in corners], kn=1e6, kd=1e3, kt=1e5, mu=0.5))
model = b.build()

# Stiff springs and contact at a large step: the linearly implicit step (RedMax Eq. 2) uses each force's
# K = df/dq and D = -df/dqd; symmetrize=True would keep the system matrix symmetric.
res = rm.simulate(model, integrator="euler", dt=5e-3, duration=1.0)
print("energies at the end:", {k: round(float(v[-1]), 1) for k, v in res.energy.items()})
print("box height (rests at 2 on the ground):", round(float(res.q[-1, 4]), 3))

# Maximal coordinates: free bodies on SE(3), joints as KKT constraints with Baumgarte stabilisation.
chain = rm.scenes.load("reference/-1").model
ref = rm.simulate(chain, integrator="dop853", dt=1e-3, duration=0.3, rtol=1e-10, atol=1e-10)
E_ref = rm.forward_kinematics(chain, ref.q[-1])[1]
for h in (2e-3, 1e-3, 5e-4):
    mx = rm.simulate_maximal(chain, h, 0.3)
    err = np.abs(mx.E_wb[-1][:, :3, 3] - E_ref[:, :3, 3]).max()
    print(f"h = {h:.0e}: maximal vs reduced body positions differ by {err:.3f} cm, joint violation "
          f"{mx.violation.max():.1e} cm")
