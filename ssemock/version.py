"""The version of ssemock (a module of its own: the cache keys and provenance name it without importing the package)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
