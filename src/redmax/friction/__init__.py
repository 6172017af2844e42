"""Friction in joints, loop closures and against floors (RedMax paper §5; Sueda's notes §1.13, §2.11).

Declare it on the model: a joint's contact geometry (``ModelBuilder.add_body(..., contact=Cylinder(r, h))``,
:class:`Box` for a prismatic joint, :class:`Ball` for a spherical one), a loop's (``Loop(..., contact=...)``), and
the coefficients ``ModelBuilder(..., friction={"joint": mu1, "world": mu2})`` (0.6 each by default; floors have
friction only when the table is given).  ``simulate(..., friction_solver="bisp")`` (the default) resolves it by
Bilateral Staggered Projections (:mod:`redmax.friction.bisp`).
"""

from redmax.friction.coefficients import DEFAULT_MU
from redmax.friction.geometry import Ball, Box, ContactSet, Cylinder, contact_set

__all__ = ["DEFAULT_MU", "Ball", "Box", "ContactSet", "Cylinder", "contact_set"]
