"""P4Runtime at the protocol level, shared by the switch emulator and the control plane."""
