"""Headless plots and animations of redmax models and simulation results (needs matplotlib).

Importing this package does not import matplotlib; each function imports it on first use and draws
with the Agg backend on its own :class:`matplotlib.figure.Figure` (pyplot's global state is never
touched).  Install the optional dependency with ``pip install 'redmax[plot]'`` (matplotlib), or
``pip install 'redmax[viz]'`` for robot meshes in drawings (trimesh) and the HTML replays and viewer (meshcat).

* :func:`plot_energy`: kinetic, potential and total energy against time (the RedMax paper's Fig. 1b).
* :func:`render_frame`: one configuration drawn into a 3D axes.
* :func:`animate`: a GIF (Pillow) or MP4 (ffmpeg) of a simulated trajectory.
* :func:`plot_constraints`: energy and constraint violation of a constrained run.
* :func:`plot`: what the solvers did: ``what="energy" | "violation" | "reactions" | "iterations"``.
* :func:`replay_html`: a self-contained HTML replay (also ``Result.to_html``).
* :func:`show`: the viewer in a notebook (or its page's path); :func:`serve`: on localhost (``redmax view``).
"""

from __future__ import annotations

from redmax.viz.animate import animate
from redmax.viz.constraints import plot_constraints
from redmax.viz.html import replay_html
from redmax.viz.plots import plot_energy, render_frame
from redmax.viz.solver_plots import plot
from redmax.viz.viewer import serve, show

__all__ = ["animate", "plot", "plot_constraints", "plot_energy", "render_frame", "replay_html", "serve", "show"]
