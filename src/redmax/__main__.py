"""``python -m redmax [SCENE] [INTEGRATOR]``: simulate a built-in scene and print its energy over time."""

from __future__ import annotations

import sys
import time

import numpy as np

from redmax import scenes
from redmax.errors import RedmaxError


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help", "scenes"):
        print(__doc__)
        for name, desc in scenes.available().items():
            print(f"  {name:14s} {desc}")
        return 0
    name = argv[0] if argv else "reference/05"
    integrator = argv[1] if len(argv) > 1 else "euler"
    try:
        scene = scenes.load(name)
        t0 = time.perf_counter()
        res = scene.simulate(integrator=integrator)
        wall = time.perf_counter() - t0
    except RedmaxError as e:
        print(f"redmax: {e}", file=sys.stderr)
        return 2
    m = scene.model
    print(f"{name}: {scene.description}")
    print(f"{m.nb} bodies, {m.ndof} DOFs; {integrator}, dt = {res.meta['dt']}, {res.t.size - 1} steps in {wall:.2f} s")
    print(f"{'t':>8s} {'kinetic':>14s} {'potential':>14s} {'total':>14s}")
    for k in np.linspace(0, res.t.size - 1, 11).astype(int):
        e = res.energy
        print(f"{res.t[k]:8.3f} {e['kinetic'][k]:14.6f} {e['total'][k] - e['kinetic'][k]:14.6f} {e['total'][k]:14.6f}")
    print(f"H = T(end) + V(end) - V(0) = {res.H:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
