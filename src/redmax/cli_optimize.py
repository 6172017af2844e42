"""``redmax optimize SCENE``: minimise a scene's objective with SciPy's L-BFGS-B and adjoint gradients.

    redmax optimize diff/100 [--integrator bdf1|sdirk2|bdf2] [--maxiter 100] [--gtol 1e-6]
                             [--plot objective.png] [--animate motion.gif] [--json summary.json] [--quiet]

Prints the objective per iteration and the optimal parameters; ``--plot`` writes the objective per iteration,
``--animate`` the optimised motion.  Scenes without an ``[objective]`` are refused (status 2).
"""

from __future__ import annotations

import json
import time

import numpy as np

from redmax.errors import SceneError

__all__ = ["add_parser", "optimize_scene", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser("optimize", help="optimise the parameters of a scene that defines an objective")
    p.add_argument("scene", help="built-in name (e.g. diff/100) or scene file (.toml) with [objective]")
    p.add_argument("--integrator", choices=("bdf1", "sdirk2", "bdf2"), help="default: the scene's")
    p.add_argument("--maxiter", type=int, default=100, help="L-BFGS-B iterations (default 100)")
    p.add_argument("--gtol", type=float, default=1e-6, help="L-BFGS-B projected-gradient tolerance")
    p.add_argument("--plot", metavar="FILE.png", help="plot the objective per iteration")
    p.add_argument("--animate", metavar="FILE.gif|FILE.mp4", help="animate the optimised motion")
    p.add_argument("--json", metavar="FILE.json", help="write the history and the optimal parameters")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")


def optimize_scene(scene, integrator=None, maxiter: int = 100, gtol: float = 1e-6, callback=None) -> dict:
    """Minimise ``scene.objective`` from ``scene.parameters`` with L-BFGS-B.  Returns a dict: ``x`` (optimal
    parameters), ``history`` (objective at the start and after every iteration), ``scipy`` (the OptimizeResult),
    ``evaluations``, ``seconds``, ``result`` (the optimised forward run)."""
    from scipy.optimize import minimize

    if scene.objective_spec is None:
        raise SceneError(f"scene {scene.name!r} defines no objective ([objective] and [[parameters]])")
    prob = scene.problem(integrator)
    x0 = prob.x0.copy()
    history = [prob.value(x0)]
    last = {}

    def fun(x):
        v, g = prob(x)
        last["x"], last["v"] = np.array(x), v
        return v, g

    def cb(xk):
        history.append(last["v"] if np.array_equal(last.get("x"), xk) else prob.value(xk))
        if callback is not None:
            callback(len(history) - 1, history[-1])

    t0 = time.perf_counter()
    res = minimize(fun, x0, jac=True, method="L-BFGS-B", callback=cb, options={"maxiter": int(maxiter),
                                                                               "gtol": float(gtol)})
    seconds = time.perf_counter() - t0
    run, _ = prob.simulate(res.x)
    run.meta["scene"] = scene.name
    return {"x": res.x, "history": history, "scipy": res, "evaluations": len(prob.history), "seconds": seconds,
            "result": run, "problem": prob}


def run(a) -> int:
    from redmax import scenes

    s = scenes.load(a.scene)
    if s.objective_spec is None:
        raise SceneError(f"scene {s.name!r} defines no objective ([objective] and [[parameters]]); see "
                         "docs/differentiable.md")
    if a.maxiter < 1:
        raise SceneError(f"--maxiter must be at least 1, got {a.maxiter}")
    if not (np.isfinite(a.gtol) and a.gtol > 0):
        raise SceneError(f"--gtol must be positive and finite, got {a.gtol}")

    def report(k, v):
        if not a.quiet:
            print(f"iteration {k:3d}: objective {v:.10g}")

    out = optimize_scene(s, a.integrator, a.maxiter, a.gtol, report)
    h = out["history"]
    if not a.quiet:
        names = [p.name for p in out["problem"].parameters]
        print(f"{s.name}: objective {h[0]:.10g} -> {h[-1]:.10g} in {len(h) - 1} iterations, "
              f"{out['evaluations']} gradients ({out['seconds']:.2f} s; {out['scipy'].message})")
        print("parameters: " + ", ".join(f"{n} = {np.array2string(v, precision=6)}" for n, v in
                                         zip(names, out["problem"].split(out["x"]), strict=True)))
    if a.plot:
        from redmax.viz.optimization import plot_objective

        plot_objective(h, a.plot, title=f"{s.name}: objective per iteration")
    if a.animate:
        from redmax.viz import animate

        animate(s.model if not out["problem"].parameters else out["problem"].setup(out["x"]).model, out["result"],
                a.animate)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump({"scene": s.name, "history": [float(v) for v in h], "x": out["x"].tolist(),
                       "evaluations": out["evaluations"], "message": str(out["scipy"].message)}, fh, indent=1)
    for flag, path in (("plot", a.plot), ("animation", a.animate), ("summary", a.json)):
        if path and not a.quiet:
            print(f"wrote {flag} {path}")
    return 0
