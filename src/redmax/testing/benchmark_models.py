"""The benchmark chain of the step benchmark (benchmarks/step.py), as a redmax model and as MuJoCo MJCF.

N links, each a 0.1 x 0.02 x 0.02 m box of 1 kg with its centre of mass at its middle; revolute joints at the
proximal ends, axes alternating y (even links) and z (odd links); gravity -9.81 z; joint damping 0.1 and joint
stiffness 1 about q = 0; initial ``q_i = 0.1 cos(0.7 i)``, ``qd = 0``.  With springs: for every link i >= 2 a
zero-rest-length spring of stiffness 100 N/m between the centre of link i-2 and the point of link i that coincides
with it when the chain is straight (MuJoCo: a spatial tendon between two sites with ``springlength="0"``).
"""

from __future__ import annotations

import numpy as np

from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.configuration import State
from redmax.forces.maximal import PointSpring
from redmax.joints.simple import Revolute
from redmax.spatial import trans

__all__ = ["benchmark_chain", "benchmark_chain_mjcf", "benchmark_q0"]

LENGTH, WIDTH, MASS = 0.1, 0.02, 1.0


def benchmark_q0(n: int) -> np.ndarray:
    """The initial coordinates ``0.1 cos(0.7 i)``."""
    return 0.1 * np.cos(0.7 * np.arange(n))


def benchmark_chain(n: int, springs: bool = True, damping: float = 0.1, stiffness: float = 1.0, hold: bool = False):
    """(model, initial State) of the benchmark chain with ``n`` links (``damping``, ``stiffness``: per joint); with
    ``hold`` the last link's far end is held by a ball-socket constraint (``redmax.constraints.Point`` named "hold")
    at the world point where it starts (the constraint benchmark, benchmarks/constraints.py)."""
    b = ModelBuilder(f"chain{n}{'-springs' if springs else ''}{'-held' if hold else ''}", gravity=(0.0, 0.0, -9.81))
    density = MASS / (LENGTH * WIDTH * WIDTH)
    q0 = benchmark_q0(n)
    prev = None
    for i in range(n):
        axis = (0.0, 1.0, 0.0) if i % 2 == 0 else (0.0, 0.0, 1.0)
        prev = b.add_body(f"link{i}", Cuboid(LENGTH, WIDTH, WIDTH, density=density), Revolute(axis), parent=prev,
                          joint_name=f"j{i}", joint_placement=None if i == 0 else trans(LENGTH, 0, 0),
                          body_placement=trans(LENGTH / 2, 0, 0), q=[q0[i]], stiffness=stiffness, rest=[0.0],
                          joint_damping=damping)
    if springs:
        for i in range(2, n):
            b.add_force(PointSpring((f"link{i - 2}", (0.0, 0.0, 0.0)), (f"link{i}", (-2 * LENGTH, 0.0, 0.0)), ks=100.0,
                                    name=f"spring{i}"))
    if hold:
        from redmax.constraints import Point
        from redmax.kinematics import forward_kinematics

        _, E_wb = forward_kinematics(b.build(), q0)
        tip = E_wb[-1, :3, :3] @ np.array([LENGTH / 2, 0.0, 0.0]) + E_wb[-1, :3, 3]
        b.add_constraint(Point([(f"link{n - 1}", (LENGTH / 2, 0.0, 0.0)), ("world", tip)], name="hold"))
    model = b.build()
    return model, State(q0.copy(), np.zeros(n), 0.0, model.jstate0.copy())


def benchmark_chain_mjcf(n: int, springs: bool = True, integrator: str = "implicitfast", dt: float = 1e-3) -> str:
    """MJCF of the same chain for MuJoCo (contacts off; set ``qpos`` to :func:`benchmark_q0` after loading)."""
    L, w = LENGTH, WIDTH
    inner = ""
    for i in reversed(range(n)):
        axis = "0 1 0" if i % 2 == 0 else "0 0 1"
        pos = "0 0 0" if i == 0 else f"{L} 0 0"
        site = f'<site name="c{i}" pos="{L / 2} 0 0"/><site name="p{i}" pos="{L / 2 - 2 * L} 0 0"/>'
        inner = (f'<body name="link{i}" pos="{pos}"><joint name="j{i}" type="hinge" axis="{axis}" damping="0.1" '
                 f'stiffness="1" springref="0"/><geom type="box" size="{L / 2} {w / 2} {w / 2}" pos="{L / 2} 0 0" '
                 f'mass="{MASS}"/>{site}{inner}</body>')
    tendons = ""
    if springs:
        tendons = "<tendon>" + "".join(
            f'<spatial stiffness="100" springlength="0"><site site="c{i - 2}"/><site site="p{i}"/></spatial>'
            for i in range(2, n)) + "</tendon>"
    return (f'<mujoco><option timestep="{dt}" integrator="{integrator}" gravity="0 0 -9.81">'
            f'<flag contact="disable"/></option><worldbody>{inner}</worldbody>{tendons}</mujoco>')
