"""Simulate a built-in reference scene three ways and compare the final energies.

Run: python examples/quickstart.py
"""

import redmax as rm

scene = rm.scenes.load("reference/-1")  # the simpler serial chain: 2 links, q = (pi/2, pi/4)
print(scene.model.describe())

euler = scene.simulate(integrator="euler")  # linearly implicit Euler, h = 1e-2 (RedMax Eq. 2)
dop_redmax = scene.simulate(integrator="dop853", rtol=1e-10, atol=1e-10)  # Mr^-1 fr
dop_recursive = scene.simulate(integrator="dop853", method="recursive", rtol=1e-10, atol=1e-10)  # ABA

for name, res in [("euler", euler), ("dop853/redmax", dop_redmax), ("dop853/recursive", dop_recursive)]:
    e = res.energy
    drift = abs(e["total"][-1] - e["total"][0])
    print(f"{name:18s} T(end) = {e['kinetic'][-1]:12.4f}  H = {res.H:12.4f}  |dE| = {drift:.3e}")
