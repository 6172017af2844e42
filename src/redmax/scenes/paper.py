"""Reconstructions of the RedMax paper's HAND and HAGFISH demos (Figs. 2 and 3).  The paper gives no dimensions;
everything below is **our construction**, documented as such (units cm, g, s; density 1).

* ``paper/hand`` (Fig. 2): an arm whose elbow angle is prescribed by a reduced row (hybrid dynamics) and a hand with
  four fingers and a thumb.  Each finger has a universal MCP joint (flexion, abduction), a PIP and a DIP revolute;
  the DIP is eliminated by hyper-reduced coordinates, ``q_dip = 0.5 q_pip`` (``ModelBuilder.couple``, paper
  Eqs. 8-10), so the model's DOFs are the elbow, ``<finger>.mcp.x/.y``, ``<finger>.pip`` and the thumb's four.
  Every fingertip (the distal phalanx's end) follows a world trajectory through maximal point rows
  (``prescribed_point``): the positions a reference grasp motion of the joints gives, sampled every 0.05 s
  (piecewise linear).  Three rows pin the three DOFs of each finger; the thumb keeps one free DOF.  The
  required elbow torque and fingertip wrenches are in ``Result.reactions``.
* ``paper/hagfish`` (Fig. 3): a tapered body of 100 segments on joints alternating z-revolute and xy-universal
  (150 DOFs), the head held fixed ("in a jar"), per-joint limits (QP rows), joint springs, joint damping and
  water-like body damping, no gravity; it ties an overhand knot.  The front of the body (muscles: stiff joint
  springs) holds the shape it starts in, a straight neck and a 270-degree loop whose end crosses over the neck;
  the soft tail's tip is guided (a ``prescribed_point`` maximal row, the paper's hybrid dynamics) around the
  neck, under the loop's crossing strand, up through the loop and away, which pulls the knot into place.  The
  paper's knot motion comes from measurements it does not give; the loop, the guided path and the stiffnesses are
  ours.  Self-collision: spheres centred on the segments, point-pair inequality rows ``n . (v_a - v_b) >= beta d``
  (``self_collision``; the paper's spline and Newton search replaced by the sphere centres, our choice) keep the
  body from passing through itself (``Result.meta["min_distance"]``); the knot determinant of the final body
  (:mod:`redmax.testing.knots`) is 3, a trefoil, against 1 at the start.
"""

from __future__ import annotations

import math

import numpy as np

from redmax.bodies import Cuboid, Cylinder
from redmax.builder import ModelBuilder
from redmax.constraints import Limit, PiecewiseLinear, PrescribedJoint, PrescribedPoint, SelfCollision, Sinusoid
from redmax.joints import Fixed, Revolute, Universal
from redmax.scenes import Scene, register
from redmax.spatial import make_E, rot_y, rot_z, trans

__all__ = ["FINGERS", "hand_reference_motion"]

G = (0.0, 0.0, -980.0)
FINGERS = {  # name: (MCP y on the palm, phalanx lengths proximal, middle, distal; width)
    "index": (3.0, (4.0, 2.5, 1.8), 1.6),
    "middle": (1.0, (4.5, 2.8, 1.9), 1.7),
    "ring": (-1.0, (4.2, 2.6, 1.8), 1.6),
    "little": (-3.0, (3.4, 2.0, 1.6), 1.4),
}
THUMB = (4.6, 3.1, 2.4)
ELBOW = Sinusoid(0.3, 0.5, 0.0, 0.4)  # elbow angle (rad): 0.4 + 0.3 sin(pi t)
HAND_T = 2.0
KNOTS = 41


def _grasp(t: float) -> float:
    """Grasp closure 0..1..0 over the run (smooth)."""
    return 0.5 * (1.0 - math.cos(2.0 * math.pi * t / HAND_T))


def hand_reference_motion(model, t: float) -> np.ndarray:
    """The reference motion (model DOFs) whose fingertip positions the hand scene prescribes."""
    s = _grasp(t)
    q = np.zeros(model.ndof)
    names = list(model.dof_names)
    q[names.index("elbow")] = ELBOW.evaluate(t)[0][0]
    for k, f in enumerate(FINGERS):
        q[names.index(f"{f}.mcp.x")] = 0.04 * (k - 1.5) * (1.0 - s)  # abduction, closing with the grasp
        q[names.index(f"{f}.mcp.y")] = 0.25 + 0.6 * s
        q[names.index(f"{f}.pip")] = 0.35 + 0.9 * s
    q[names.index("thumb.cmc.x")] = 0.2 + 0.3 * s
    q[names.index("thumb.cmc.y")] = 0.2 + 0.4 * s
    q[names.index("thumb.mp")] = 0.2 + 0.4 * s
    q[names.index("thumb.ip")] = 0.2 + 0.5 * s
    return q


def _hand_bodies(b: ModelBuilder) -> None:
    b.add_body("upper_arm", Cuboid(4, 4, 28), Fixed(), joint_name="shoulder", body_placement=trans(0, 0, -14))
    b.add_body("forearm", Cuboid(26, 5, 4), Revolute((0, 1, 0)), parent="upper_arm", joint_name="elbow",
               joint_placement=trans(0, 0, -28), body_placement=trans(13, 0, 0))
    b.add_body("palm", Cuboid(9, 8, 2.5), Fixed(), parent="forearm", joint_name="wrist",
               joint_placement=trans(26, 0, 0), body_placement=trans(4.5, 0, 0))
    flex = rot_y(-math.pi / 2)  # joint x = world z (abduction), joint y = world y (flexion), joint -z = the finger
    for f, (y, (l1, l2, l3), w) in FINGERS.items():
        b.add_body(f"{f}.proximal", Cuboid(w, w, l1), Universal(), parent="palm", joint_name=f"{f}.mcp",
                   joint_placement=make_E(flex, (9.0, y, 0.0)), body_placement=trans(0, 0, -l1 / 2))
        b.add_body(f"{f}.middle", Cuboid(0.95 * w, 0.95 * w, l2), Revolute((0, 1, 0)), parent=f"{f}.proximal",
                   joint_name=f"{f}.pip", joint_placement=trans(0, 0, -l1), body_placement=trans(0, 0, -l2 / 2))
        b.add_body(f"{f}.distal", Cuboid(0.9 * w, 0.9 * w, l3), Revolute((0, 1, 0)), parent=f"{f}.middle",
                   joint_name=f"{f}.dip", joint_placement=trans(0, 0, -l2), body_placement=trans(0, 0, -l3 / 2))
        b.couple(f"{f}.dip", f"{f}.pip", 0.5)
    t1, t2, t3 = THUMB
    b.add_body("thumb.metacarpal", Cuboid(1.8, 1.8, t1), Universal(), parent="palm", joint_name="thumb.cmc",
               joint_placement=make_E(rot_z(math.pi / 4) @ flex, (1.5, 4.0, -0.5)), body_placement=trans(0, 0, -t1 / 2))
    b.add_body("thumb.proximal", Cuboid(1.6, 1.6, t2), Revolute((0, 1, 0)), parent="thumb.metacarpal",
               joint_name="thumb.mp", joint_placement=trans(0, 0, -t1), body_placement=trans(0, 0, -t2 / 2))
    b.add_body("thumb.distal", Cuboid(1.5, 1.5, t3), Revolute((0, 1, 0)), parent="thumb.proximal",
               joint_name="thumb.ip", joint_placement=trans(0, 0, -t2), body_placement=trans(0, 0, -t3 / 2))


def _tips() -> dict:
    out = {f: (f"{f}.distal", l3) for f, (_, (_, _, l3), _) in FINGERS.items()}
    out["thumb"] = ("thumb.distal", THUMB[2])
    return out


@register("paper/hand", "HAND (reconstruction): prescribed elbow, fingertips on maximal point rows, DIP = 0.5 PIP "
          "eliminated")
def scene_hand() -> Scene:
    from redmax.kinematics import forward_kinematics

    probe = ModelBuilder("paper/hand", G)
    _hand_bodies(probe)
    pm = probe.build()
    times = np.linspace(0.0, HAND_T, KNOTS)
    tips = _tips()
    paths = {f: [] for f in tips}
    for t in times:
        _, E_wb = forward_kinematics(pm, hand_reference_motion(pm, t))
        for f, (body, l3) in tips.items():
            E = E_wb[pm.body_names.index(body)]
            # rounded to 1e-10 (the scene's units): the packaged file must not depend on the last bits of the
            # kinematics on one machine
            paths[f].append(np.round(E[:3, :3] @ np.array([0.0, 0.0, -l3 / 2]) + E[:3, 3], 10))
    b = ModelBuilder("paper/hand", G)
    _hand_bodies(b)
    q0 = hand_reference_motion(pm, 0.0)
    e = 1e-6
    qd0 = (hand_reference_motion(pm, e) - hand_reference_motion(pm, -e)) / (2 * e)
    for i, joint in enumerate(pm.joint_names):  # start on the reference motion (a DIP follows its coupling)
        names = pm.dofs.coord_names[pm.idx[i]:pm.idx[i + 1]]
        if names and names[0] in pm.dof_names:
            k = [pm.dof_names.index(n) for n in names]
            b.set_state(joint, q=q0[k].tolist(), qd=qd0[k].tolist())
    b.add_constraint(PrescribedJoint("elbow", ELBOW, name="elbow"))
    for f, (body, l3) in tips.items():
        b.add_constraint(PrescribedPoint(body, (0.0, 0.0, -l3 / 2), PiecewiseLinear(times, np.array(paths[f])),
                                         name=f"{f}_tip"))
    return Scene("paper/hand", b.build(), duration=HAND_T, dt=5e-3, baumgarte=20.0)


# ------------------------------------------------------------------------------------------------
# Hagfish
# ------------------------------------------------------------------------------------------------

HAGFISH_N = 100  # moving joints
SEG = 0.5  # segment length (cm)
LIMIT = 0.6  # joint limit (rad)
NECK, LOOP = 16, 20  # segments of the straight neck and of the loop (the rest is the tail)
LOOP_ROLL = 0.12  # roll of the loop's universal joints (rad): the loop rises, so that its end crosses over the neck
K_FRONT, K_TAIL = 1.0e6, 1.0e3  # joint springs of the neck and loop (their shape held) and of the tail
DAMPING = 100.0  # joint damping
TAIL_TIMES = (0.0, 1.0, 1.8, 2.4, 3.0, 3.6, 4.4)  # the tail tip's waypoints (s), after which it is held


def _radius(i: int) -> float:
    """Tapered body: radius 0.6 cm at the head to 0.25 cm at the tail."""
    return 0.6 - 0.35 * i / (HAGFISH_N - 1)


def _hagfish_shape() -> list:
    """Initial (and rest) coordinates of every joint: the straight neck, the loop (a 270-degree turn on the
    revolute joints, a roll on the universal ones), the straight tail."""
    bend = 1.5 * math.pi / (LOOP // 2)
    out = []
    for i in range(HAGFISH_N):
        loop = NECK <= i < NECK + LOOP
        out.append([bend if loop else 0.0] if i % 2 == 0 else [LOOP_ROLL if loop else 0.0, 0.0])
    return out


def _hagfish_body(b: ModelBuilder, shape) -> list:
    b.add_body("head", Cylinder(0.7, 2.0), Fixed(), joint_name="jar", body_placement=make_E(rot_y(math.pi / 2),
                                                                                           (-1.0, 0.0, 0.0)))
    prev, points = "head", []
    for i in range(HAGFISH_N):
        r = _radius(i)
        name = f"s{i}"
        if i % 2 == 0:
            joint, lim = Revolute((0, 0, 1)), ([-LIMIT], [LIMIT])
        else:
            joint, lim = Universal(), ([-LIMIT, -LIMIT], [LIMIT, LIMIT])
        k = K_FRONT if i < NECK + LOOP + 2 else K_TAIL
        b.add_body(name, Cylinder(r, SEG), joint, parent=prev, joint_name=f"j{i}",
                   joint_placement=trans(SEG if i else 0.0, 0, 0),
                   body_placement=make_E(rot_y(math.pi / 2), (SEG / 2, 0.0, 0.0)), q=shape[i], stiffness=k,
                   joint_damping=DAMPING, damping=1.0)
        b.add_constraint(Limit(f"j{i}", lim[0], lim[1], name=f"limit_j{i}"))
        points.append({"body": name, "point": [0.0, 0.0, 0.0], "radius": r})
        prev = name
    return points


def hagfish_centerline(model, q, jstate=None) -> np.ndarray:
    """The body's centre line (joint origins and the tail tip, world, (HAGFISH_N + 1, 3)) at coordinates q."""
    from redmax.kinematics import forward_kinematics

    E_wj, _ = forward_kinematics(model, q, jstate)
    tip = E_wj[-1] @ np.array([SEG, 0.0, 0.0, 1.0])
    return np.vstack([E_wj[1:, :3, 3], tip[:3]])


def _tail_path(model) -> np.ndarray:
    """Waypoints of the tail tip (world, one per TAIL_TIMES), from the loop of the initial shape: round the neck
    below the body, under the loop's crossing strand into the loop, up through it, out over the loop and away."""
    P = hagfish_centerline(model, model.q0)
    loop = P[NECK:NECK + LOOP + 1]
    A = np.c_[2.0 * loop[:, 0], 2.0 * loop[:, 1], np.ones(len(loop))]  # least-squares circle of the loop (xy)
    cx, cy, c = np.linalg.lstsq(A, loop[:, 0] ** 2 + loop[:, 1] ** 2, rcond=None)[0]
    R = math.sqrt(c + cx * cx + cy * cy)
    xc = cx - R  # where the loop's end crosses over the neck
    return np.array([P[-1], (xc - 6.0, -8.0, -2.0), (xc - 5.0, cy, -2.5), (cx, cy, -2.5), (cx, cy, 4.0),
                     (cx + R + 4.0, cy + R + 3.0, 4.0), (cx + R + 12.0, cy + R + 8.0, 4.0)])


@register("paper/hagfish", "HAGFISH (reconstruction): 100 joints alternating z-revolute and xy-universal, limits "
          "and self-collision rows (QP); it ties an overhand knot without interpenetration")
def scene_hagfish() -> Scene:
    shape = _hagfish_shape()
    b0 = ModelBuilder("paper/hagfish", (0.0, 0.0, 0.0))
    _hagfish_body(b0, shape)
    path = _tail_path(b0.build())
    b = ModelBuilder("paper/hagfish", (0.0, 0.0, 0.0))
    points = _hagfish_body(b, shape)
    b.add_constraint(SelfCollision(points, skip=4, margin=0.4, max_rows=128, name="self_collision"))
    b.add_constraint(PrescribedPoint(f"s{HAGFISH_N - 1}", (0.0, 0.0, SEG / 2),
                                     PiecewiseLinear(TAIL_TIMES, np.round(path, 10)), name="tail"))
    return Scene("paper/hagfish", b.build(), duration=4.8, dt=2e-3, baumgarte=5.0)  # 0.4 s held after the path
