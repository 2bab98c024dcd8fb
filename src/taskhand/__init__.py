"""taskhand: runs coding agents through a plan of tasks."""

__version__ = "0.1.0"
