"""The cli backend: an agent's own program, driven through its preset."""
