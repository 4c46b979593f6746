"""sliceportal: guaranteed-delay network slices on P4 switches."""

__version__ = "0.1.0"
