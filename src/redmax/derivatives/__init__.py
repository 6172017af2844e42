"""Analytic derivatives of the dynamics.

First and second order of inverse and forward dynamics (IDSVA, IDSVA-SO, FDSVA-SO; Singh, Russell & Wensing),
Balafoutis-Patel with its partials, and the derivatives of the RedMax equations and Jacobian.
"""
