"""The version, in a module of its own so that any module can read it without importing
the package root (which loads the public API lazily)."""

__version__ = "0.1.0"
