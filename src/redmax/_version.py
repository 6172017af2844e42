"""The package version (one place; read by the package face, the command line and the results files)."""

__version__ = "0.1.0"
