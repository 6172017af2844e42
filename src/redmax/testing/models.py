"""Seeded random model generators for tests and benchmarks: chains, binary trees, floating bases,
multi-DOF joints."""

from __future__ import annotations

import numpy as np

from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.joints import (
    Composite,
    Fixed,
    Free2D,
    Free3D,
    Planar,
    Prismatic,
    Revolute,
    SphericalEuler,
    SphericalExp,
    SplineCurve,
    SplineSurface,
    Translational,
    Universal,
)
from redmax.spatial import exp_so3, make_E, rot_y


def random_rotation(rng) -> np.ndarray:
    return exp_so3(rng.normal(size=3))


def random_placement(rng, scale=1.0) -> np.ndarray:
    return make_E(random_rotation(rng), rng.normal(size=3) * scale)


def random_axis(rng) -> np.ndarray:
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def spline_frames() -> list:
    return [make_E(rot_y(np.pi), (-10, 0, 0)), make_E(rot_y(np.pi / 2), (0, 0, -2)), make_E(rot_y(0.0), (10, 0, 0)),
            make_E(rot_y(-np.pi / 2), (0, 0, 2))]


def spline_grid() -> np.ndarray:
    g = np.zeros((6, 4, 4))
    for i1 in range(4):
        for i2 in range(4):
            s1, s2 = i1 / 3, i2 / 3
            x, y = -15 + 30 * s1, -15 + 30 * s2
            g[:, i1, i2] = [x, y, 0.05 * (x * x + y * y), -np.pi / 4 + np.pi / 2 * s1, -np.pi / 4 + np.pi / 2 * s1, 0]
    return g


def all_joint_kinds(rng) -> list:
    """One instance of every joint family, with random axes where they have one."""
    return [
        Fixed(), Revolute(random_axis(rng)), Prismatic(random_axis(rng)), Planar(random_axis(rng), random_axis(rng)),
        Translational(), Universal(), SphericalExp(), SphericalEuler("XYZ"), SphericalEuler("ZXZ"), Free2D(),
        Free3D(), Free3D("euler", "YXZ"), Composite(Revolute((1, 0, 0)), Prismatic((1, 0, 0))),
        Composite(Universal(), SphericalExp(), Prismatic(random_axis(rng))), SplineCurve(spline_frames()),
        SplineSurface(spline_grid()),
    ]


def random_model(rng, n: int = 6, topology: str = "chain", joints: str = "revolute", floating: bool = False,
                 gravity=(0.0, 0.0, -9.81), damping: bool = False, stiffness: bool = False):
    """A seeded random model.

    Args:
        topology: "chain", "binary" (binary tree numbered breadth-first), "binary-dfs" (the same tree
            numbered depth-first, the order URDF parsers and Pinocchio use) or "random" (random parents).
        joints: "revolute", "revprism" (revolute/prismatic mix), "mixed" (every joint family in turn;
            one composite has redundant rotations, so M is singular once n > 13) or "multi" (a random
            mix of fixed, revolute, prismatic, universal, spherical and planar joints: M stays regular).
        floating: use a free 3D root joint.
    """
    b = ModelBuilder(f"random-{topology}-{joints}", gravity)
    kinds = all_joint_kinds(rng) if joints == "mixed" else None
    names = []
    dfs_parent = _dfs_binary_parents(n) if topology == "binary-dfs" else None
    for k in range(n):
        if topology == "binary-dfs":
            parent = names[dfs_parent[k]] if dfs_parent[k] >= 0 else None
        elif topology == "chain":
            parent = names[-1] if names else None
        elif topology == "binary":
            parent = names[(k - 1) // 2] if k else None
        else:
            parent = names[int(rng.integers(0, k))] if k else None
        if k == 0 and floating:
            joint = Free3D()
        elif joints == "revolute":
            joint = Revolute(random_axis(rng))
        elif joints == "revprism":
            joint = Revolute(random_axis(rng)) if rng.random() < 0.6 else Prismatic(random_axis(rng))
        elif joints == "multi":
            joint = [Fixed(), Revolute(random_axis(rng)), Prismatic(random_axis(rng)), Universal(), SphericalExp(),
                     Planar(random_axis(rng), random_axis(rng))][int(rng.integers(0, 6))]
        else:
            joint = kinds[k % len(kinds)]
        name = f"b{k}"
        b.add_body(name, Cuboid(*rng.uniform(0.3, 2.0, 3), density=rng.uniform(0.5, 2.0)), joint, parent=parent,
                   joint_placement=random_placement(rng), body_placement=random_placement(rng, 0.5),
                   damping=rng.uniform(0.1, 1.0) if damping else 0.0,
                   stiffness=rng.uniform(1.0, 5.0) if stiffness else 0.0,
                   joint_damping=rng.uniform(0.1, 1.0) if damping else 0.0)
        names.append(name)
    return b.build()


def _dfs_binary_parents(n: int) -> list[int]:
    """Parents of a complete binary tree of n nodes numbered in depth-first pre-order."""
    bfs_to_dfs = {}
    order = []

    def visit(b):
        if b >= n:
            return
        bfs_to_dfs[b] = len(order)
        order.append(b)
        visit(2 * b + 1)
        visit(2 * b + 2)

    visit(0)
    return [-1 if b == 0 else bfs_to_dfs[(b - 1) // 2] for b in order]


def random_state(rng, model):
    """Random q, qd within the joints' sensible ranges (spline surface coordinates in [0, 1])."""
    q = rng.normal(size=model.ndof)
    qd = rng.normal(size=model.ndof)
    for i, j in enumerate(model.joints):
        a, b = model.idx[i], model.idx[i + 1]
        if j.kind == "spline_surface":
            q[a:b] = rng.uniform(0.1, 0.9, b - a)
    return q, qd
