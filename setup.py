"""Build step for the one C extension, ``redmax._ccall`` (low-overhead calls of compiled kernels; see its
source).  Everything else is in pyproject.toml.  The extension is optional: where it cannot be built (no C
compiler), redmax installs without it and single calls take the Numba dispatcher path instead."""

import numpy
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "redmax._ccall",
            sources=["src/redmax/_ccall.c"],
            include_dirs=[numpy.get_include()],
            optional=True,
        )
    ]
)
