"""Talking to switches: the P4Runtime adapter (`p4runtime.py`)."""
