"""A motion transition between two poses of a humanoid arm by spacetime optimisation (Rose et al. 1996).

The left arm of the TALOS humanoid (example-robot-data) moves from hanging to reaching forward in T seconds.
The trajectory is sampled every h; the objective is the torque integral ``P = integral sum_i tau_i^2 dt`` with
the torques of the Balafoutis-Patel recursive inverse dynamics and its exact gradient (Guenter & Rose's
partials through the finite-difference stencils, ``rm.balafoutis_patel.spacetime_objective``).  The motion is
the smoothstep between the poses plus K smooth modes per joint, ``sin^2(pi s) sin(m pi s)`` (s = t/T, zero
value and slope at both ends, so the arm starts and stops at rest), whose coefficients SciPy's BFGS optimises
with the gradient ``Phi^T dP/dpath`` (a smooth basis keeps the optimiser from exploiting the sampling with
saw-tooth motions).  Writes a plot of the torques and an animation (GIF).

Run: python examples/motion_transition.py [--quick] [--out DIR]     (needs example-robot-data and matplotlib)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
from scipy.optimize import minimize

import redmax as rm
from redmax.integrators import Result

bp = rm.balafoutis_patel


def arm_urdf(src: str, dst: str, side: str = "left") -> str:
    """Write the URDF of one TALOS arm: the torso link (fixed to the world) and every link below
    ``arm_<side>_1_link``; the gripper's own joint is frozen (fixed)."""
    tree = ET.parse(src)
    root = tree.getroot()
    children: dict[str, list] = {}
    for j in root.findall("joint"):
        children.setdefault(j.find("parent").get("link"), []).append(j)
    keep_links = {"torso_2_link"}
    keep_joints = []
    stack = [j for j in children.get("torso_2_link", []) if j.get("name") == f"arm_{side}_1_joint"]
    while stack:
        j = stack.pop()
        keep_joints.append(j)
        child = j.find("child").get("link")
        keep_links.add(child)
        stack.extend(children.get(child, []))
    for j in list(root.findall("joint")):
        if j not in keep_joints:
            root.remove(j)
        elif j.get("type") == "revolute" and j.get("name").startswith("gripper"):
            j.set("type", "fixed")
    for link in list(root.findall("link")):
        if link.get("name") not in keep_links:
            root.remove(link)
    for tag in ("transmission", "gazebo"):
        for e in list(root.findall(tag)):
            root.remove(e)
    tree.write(dst)
    return dst


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="coarse trajectory and few iterations (tests)")
    ap.add_argument("--out", default=None, help="output folder (default: out/motion_transition)")
    args = ap.parse_args([] if argv is None else argv)
    quick = args.quick or "PYTEST_CURRENT_TEST" in os.environ
    out = args.out or (tempfile.mkdtemp(prefix="redmax-transition-") if quick else
                       os.path.join("out", "motion_transition"))
    os.makedirs(out, exist_ok=True)

    from redmax.testing.robots import robot_urdf

    model = rm.load_urdf(arm_urdf(robot_urdf("talos"), os.path.join(out, "talos_left_arm.urdf")))
    print(f"TALOS left arm: {model.ndof} DOFs {list(model.dof_names)}")

    # two poses inside the joint limits: arm hanging, then reaching forward with the elbow bent
    lim = model.meta["limits"]
    lo = np.array([lim[j]["lower"] for j in model.joint_names if j in lim])
    hi = np.array([lim[j]["upper"] for j in model.joint_names if j in lim])
    q_a = np.clip(np.array([0.2, 0.3, 0.0, -0.4, 0.0, 0.0, 0.0]), lo, hi)
    q_b = np.clip(np.array([-0.6, 0.6, 0.4, -1.6, 0.5, 0.3, 0.0]), lo, hi)

    T, N, K = 1.2, (16 if quick else 60), (3 if quick else 6)
    h = T / N
    s = np.linspace(0.0, 1.0, N + 1)[:, None]
    path0 = q_a + (q_b - q_a) * (3 * s**2 - 2 * s**3)  # smoothstep guess, at rest at both ends
    Phi = np.sin(np.pi * s) ** 2 * np.sin(np.pi * s * np.arange(1, K + 1))  # (N+1, K) modes

    def path_of(x):
        return path0 + Phi @ x.reshape(K, model.ndof)

    def objective(x):
        P, grad = bp.spacetime_objective(model, path_of(x), h, rest=True)
        return P, (Phi.T @ grad).ravel()

    # the analytic gradient against complex step on a few coefficients
    x0 = np.zeros(K * model.ndof)
    _, g0 = objective(x0)
    idx = np.random.default_rng(0).choice(x0.size, 5, replace=False)
    cs = []
    for k in idx:
        xc = x0.astype(complex)
        xc[k] += 1e-30j
        cs.append(bp.spacetime_objective(model, path_of(xc), h)[0].imag / 1e-30)
    print(f"gradient vs complex step, largest relative difference: {np.max(np.abs(g0[idx] - cs) / np.abs(cs)):.1e}")

    res = minimize(objective, x0, jac=True, method="BFGS", options={"maxiter": 20 if quick else 300, "gtol": 1e-8})
    path = path_of(res.x)
    P0 = objective(x0)[0]
    print(f"BFGS: {res.nit} iterations, torque integral {P0:.4g} -> {res.fun:.4g} (N m)^2 s "
          f"({100 * (1 - res.fun / P0):.1f}% lower than the smoothstep guess)")

    qd, qdd = bp.trajectory_rates(path, h)
    t = h * np.arange(N + 1)
    taus = np.array([bp.inverse_dynamics(model, path[k], qd[k], qdd[k])[0] for k in range(N + 1)])
    taus0 = np.array([rm.rnea(model, path0[k], *[v[k] for v in bp.trajectory_rates(path0, h)])
                      for k in range(N + 1)])
    print(f"peak |tau|: {np.abs(taus0).max():.2f} N m (guess) -> {np.abs(taus).max():.2f} N m (optimised)")

    files = {}
    try:
        from matplotlib.figure import Figure  # no pyplot: nothing global is touched
    except ImportError:
        print("(pip install matplotlib for the plot and the animation)")
        return {"P": res.fun, "P0": P0, "files": files}
    fig = Figure(figsize=(11, 4))
    ax = fig.subplots(1, 2, sharey=True)
    for i, name in enumerate(model.dof_names):
        ax[0].plot(t, taus0[:, i], label=name)
        ax[1].plot(t, taus[:, i], label=name)
    ax[0].set_title(f"smoothstep guess, P = {P0:.3g}")
    ax[1].set_title(f"BFGS optimum, P = {res.fun:.3g}")
    for a in ax:
        a.set_xlabel("t (s)")
        a.grid(alpha=0.3)
    ax[0].set_ylabel("joint torque (N m)")
    ax[1].legend(fontsize=7, loc="best")
    fig.tight_layout()
    files["plot"] = os.path.join(out, "torques.png")
    fig.savefig(files["plot"], dpi=90)

    result = Result(t, path, qd, np.tile(model.jstate0, (N + 1, 1)), {}, {"integrator": "spacetime"})
    from redmax.viz import animate

    anim = animate(model, result, os.path.join(out, "transition.gif"), fps=N / T,
                   max_frames=4 if quick else 60, dpi=40 if quick else 80)
    files["animation"] = anim["path"]
    print("wrote", files["plot"], "and", files["animation"], f"({anim['frames']} frames)")
    return {"P": res.fun, "P0": P0, "files": files}


if __name__ == "__main__":
    main(None if "PYTEST_CURRENT_TEST" in os.environ else sys.argv[1:])  # the test runner's argv is not ours
