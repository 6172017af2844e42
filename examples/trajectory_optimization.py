"""Trajectory optimisation with adjoint gradients: a torque sequence that swings a double pendulum's tip to a target.

Run: python examples/trajectory_optimization.py [--plot objective.png] [--animate motion.gif]

The model is the standard 2-link chain of the reference scenes (cm, g, s) with damped joints.  The parameters are
one torque per joint and per time step (``rm.params.TorqueSequence``, 2 x 50 values); the objective is the distance
of the tip to a target at t = 0.5 s plus a small penalty on the torques.  Every evaluation runs BDF2 forward (Newton
on the positions) and one adjoint sweep backward (``rm.optimize.Problem``), so SciPy's L-BFGS-B gets the exact
gradient of all 100 parameters for about the price of one more simulation.  The gradient is first checked against
central differences in a few random directions.
"""

import argparse

import numpy as np
from scipy.optimize import minimize

import redmax as rm
from redmax.spatial import trans

ap = argparse.ArgumentParser()
ap.add_argument("--plot", help="write the objective per iteration to this PNG")
ap.add_argument("--animate", help="write the optimised motion to this GIF")
args, _ = ap.parse_known_args()  # (tests run the examples under pytest's argv)

b = rm.ModelBuilder("swing", gravity=(0, 0, -980))
b.add_body("link1", rm.Cuboid(10, 1, 1), rm.Revolute((0, 1, 0)), joint_name="joint1", body_placement=trans(5, 0, 0),
           q=[np.pi / 2], joint_damping=1e3)
b.add_body("link2", rm.Cuboid(10, 1, 1), rm.Revolute((0, 1, 0)), parent="link1", joint_name="joint2",
           joint_placement=trans(10, 0, 0), body_placement=trans(5, 0, 0), joint_damping=1e3)
model = b.build()

tip = rm.objectives.PointTarget("link2", point=(5, 0, 0), target=(12, 0, 8), time=0.5, weight=1.0)
problem = rm.optimize.Problem(
    model,
    [rm.params.TorqueSequence("joint1", scale=1e4), rm.params.TorqueSequence("joint2", scale=1e4)],
    rm.objectives.Objective(tip, regularization=1e-3),
    integrator="bdf2", dt=1e-2, duration=0.5,
)
x0 = problem.x0  # zeros: 2 x 50 torques
out = problem.evaluate(x0)
print(f"{x0.size} parameters; objective {out.value:.6g}; one gradient: forward {out.info['forward_s']:.3f} s + "
      f"backward {out.info['backward_s']:.3f} s ({out.info['newton_iterations']} Newton iterations)")

rng = np.random.default_rng(0)
for _ in range(3):  # directional derivative against central differences of the whole simulation
    d = rng.normal(size=x0.size)
    e = 1e-4
    fd = (problem.value(x0 + e * d) - problem.value(x0 - e * d)) / (2 * e)
    print(f"  gradient . d = {out.gradient @ d:+.8e}   central difference = {fd:+.8e}")

history = [out.value]  # objective per iteration (L-BFGS-B's last evaluation is its accepted point)
res = minimize(problem, x0, jac=True, method="L-BFGS-B", options={"maxiter": 30},
               callback=lambda xk: history.append(problem.history[-1]))
run, setup = problem.simulate(res.x)
x_end = tip.position(model, run.q[-1], run.jstate[-1])
print(f"objective {history[0]:.6g} -> {res.fun:.6g} in {res.nit} iterations ({res.message})")
print(f"tip at t = 0.5 s: {np.round(x_end, 3)} (target {tip.target})")

if args.plot:
    from redmax.viz.optimization import plot_objective

    plot_objective(history, args.plot, title="swing: objective per iteration")
if args.animate:
    rm.viz.animate(model, run, args.animate)
