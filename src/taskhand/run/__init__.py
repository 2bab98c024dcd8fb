"""The run: launching, the loop over tasks, the guard over what agents reach, cleanup."""
