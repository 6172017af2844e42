"""A model that exercises every constraint row type (for tests)."""

import redmax as rm
from redmax import constraints as cs
from redmax.spatial import trans


def constraint_model(which="all"):
    """Seven bodies on revolute, universal, spherical, prismatic and free joints with one constraint of every
    type (the rows are evaluated at random states: the constraints need not be consistent)."""
    b = rm.ModelBuilder("cmodel", (0, 0, -9.81))
    C = rm.Cuboid
    b.add_body("b1", C(1, 1, 10), rm.Revolute((0, 1, 0)), joint_name="j1", body_placement=trans(0, 0, -5))
    b.add_body("b2", C(1, 1, 10), rm.Universal(), parent="b1", joint_name="j2", joint_placement=trans(0, 0, -10),
               body_placement=trans(0, 0, -5))
    b.add_body("b3", rm.Sphere(1.0), rm.SphericalExp(), parent="b2", joint_name="j3", joint_placement=trans(0, 0, -10))
    b.add_body("b4", C(4, 1, 1), rm.Prismatic((1, 0, 0)), parent="b3", joint_name="j4",
               joint_placement=trans(0, 0, -1), body_placement=trans(2, 0, 0))
    b.add_body("b5", C(10, 1, 1), rm.Revolute((0, 0, 1)), joint_name="j5", joint_placement=trans(20, 0, 0),
               body_placement=trans(5, 0, 0))
    b.add_body("b6", C(2, 3, 1), rm.Free3D(), joint_name="j6", joint_placement=trans(0, 20, 5))
    b.add_body("b7", C(1, 1, 10), rm.Revolute((1, 0, 0)), parent="b5", joint_name="j7", joint_placement=trans(10, 0, 0),
               body_placement=trans(0, 0, -5))
    cons = [
        cs.Loop([("b7", (0.3, 0.2, -4)), ("b4", (1, 0.5, 0))], name="loop"),
        cs.Loop([("b1", (0.3, 0.2, -4)), ("world", (1, 0.5, 0))], name="loopw"),
        cs.Point([("b3", (0.1, 0.2, 0.3)), ("b5", (2, 0, 0.5))], name="point"),
        cs.Point([("world", (1, 2, 3)), ("b6", (0.5, 0.5, 0.5))], name="pointw"),
        cs.Weld([("b2", (0, 0.2, 1)), ("world", (0, 0, -15))], name="weld"),
        cs.Weld([("b7", (0, 0.2, 1)), ("b6", (0, 0, -1))], name="weld2"),
        cs.Universal([("b4", (1, 0, 0)), ("b6", (0.2, 0.1, 0))], axes=[(0, 1, 0), (1, 0.3, 0)], name="ujoint"),
        cs.JointRatio(["j1", "j5"], 0.7, name="ratio"),
        cs.Linear(["j1", "j5", "j2.y"], [1.0, -2.0, 0.5], 0.3, name="linear"),
        cs.PrescribedJoint("j3", cs.Sinusoid([0.3, 0.2, 0.1], [0.5, 0.7, 0.9], [0.1, 0.2, 0.3], [0.0, 0.1, 0.2]),
                           name="pj"),
        cs.PrescribedJoint("j4", cs.Sigmoid(7, 1.5, 0.0, 7.0), name="pj4"),
        cs.PrescribedBody("b6", ["wx", "wy", "wz", "vx", "vy", "vz"], angular=cs.Sinusoid([1, 2, 3], 0.3),
                          linear={"type": "sinusoid", "amplitude": [1, -2, 3], "frequency": 0.4, "frame": "world"},
                          name="pbody"),
        cs.PrescribedBody("b5", ["wz", "vy"], angular=cs.PiecewiseLinear([0, 1, 2], [[0, 0, 0], [0, 0, 1], [0, 0, 3]]),
                          name="pbody5"),
        cs.PrescribedRate("j7", cs.Sinusoid(2.0, 0.3), name="prate"),
        cs.PrescribedPoint("b2", (0.1, 0.2, -3.0), cs.Sinusoid([1, 2, 3], [0.3, 0.4, 0.5], 0.0, [0, 0, -10]),
                           name="ppoint"),
        cs.PrescribedRate("j4", cs.Constant(0.5), name="prate4"),
        cs.Limit("j1", -0.2, 0.3, name="lim1"),
        cs.Limit("j2", [-0.1, -0.5], [0.2, None], name="lim2"),
        cs.Floor("b3", radius=1.0, origin=(0, 0, -30), normal=(0.1, 0, 1), name="floor_ball"),
        cs.Floor("b6", corners=[(1, 1.5, 0.5), (-1, 1.5, -0.5), (1, -1.5, -0.5)], origin=(0, 0, 4), name="floor_box"),
        cs.SelfCollision([("b1", (0, 0, -2), 1.0), ("b1", (0, 0, 3), 1.0), ("b2", (0, 0, 0), 1.0),
                          ("b4", (1, 0, 0), 0.5), ("b5", (0, 0, 0), 1.0), ("b7", (0, 0, 2), 0.7)],
                         skip=2, margin=1e3, max_rows=20, name="coll"),
    ]
    for c in cons:
        if which == "all" or c.name in which:
            b.add_constraint(c)
    return b.build()
