"""The linearly implicit Euler step from Python: simulate, euler_step, linearized_step and the Simulator.

A 12-link revolute chain with grandparent point springs (the benchmark chain of redmax.testing.benchmark_models):

1. ``rm.simulate`` runs the whole loop in compiled code and records the energies;
2. ``rm.euler_step`` takes one pure step (State -> State) and gives the same numbers step by step;
3. ``rm.linearized_step`` exposes the system ``A qd1 = b`` of one step (dense or matrix-free);
4. ``rm.Simulator`` steps from Python with preallocated workspaces, e.g. inside a controller loop;
5. ``coriolis="implicit"`` against the reference scheme on an undamped chain spun fast: energy drift.
"""

import numpy as np

import redmax as rm
from redmax.testing.benchmark_models import benchmark_chain

h = 1e-3
model, state = benchmark_chain(12, springs=True)

# 1. the compiled loop
res = rm.simulate(model, state, integrator="euler", dt=h, duration=0.2)
print(f"simulate: {res.t.size - 1} steps, total energy {res.energy['total'][0]:.6f} -> {res.energy['total'][-1]:.6f}")

# 2. the same trajectory one pure step at a time
s = state
for _ in range(res.t.size - 1):
    s = rm.euler_step(model, s, h)
print(f"euler_step x {res.t.size - 1}: max |q - q_simulate| = {np.abs(s.q - res.q[-1]).max():.1e}")

# 3. the linear system of one step
step = rm.linearized_step(model, state, h)
A = step.dense()
qd1 = np.linalg.solve(A, step.b)
print(f"linearized_step: A is {A.shape}, symmetric: {np.allclose(A, A.T)}, "
      f"|A qd1 - b| = {np.abs(step.apply(qd1) - step.b).max():.1e}, "
      f"matches euler_step: {np.allclose(qd1, rm.euler_step(model, state, h).qd, rtol=1e-12, atol=1e-12)}")

# 4. a computed-torque controller stepping from Python: RNEA of the desired acceleration (PD on every joint)
arm, arm0 = benchmark_chain(12, springs=False)
sim = rm.Simulator(arm, arm0, dt=h)
target = np.full(arm.ndof, 0.3)
for _ in range(1000):
    q, qd = sim.q, sim.qd
    sim.step(rm.rnea(arm, q, qd, 100.0 * (target - q) - 20.0 * qd))
print(f"Simulator + computed torque: max |q - target| = {np.abs(sim.q - target).max():.3f} at t = {sim.t:.3f} "
      "(joint stiffness and damping left uncompensated)")

# 5. energy drift without damping, spun fast
free, _ = benchmark_chain(12, springs=False, damping=0.0, stiffness=0.0)
spin = rm.State(np.zeros(free.ndof), np.full(free.ndof, 3.0), 0.0, free.jstate0)
for cor in ("explicit", "implicit"):
    r = rm.simulate(free, spin, integrator="euler", dt=h, duration=1.0, coriolis=cor)
    E = r.energy["total"]
    print(f"coriolis={cor!r:11s} undamped chain: total energy {E[0]:.4f} -> {E[-1]:.4f} "
          f"({(E[-1] - E[0]) / abs(E[0]):+.2%})")
