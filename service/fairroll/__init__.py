"""fairroll: verifiable dice for tabletop systems."""

__all__ = ["__version__"]

__version__ = "0.1.0"
