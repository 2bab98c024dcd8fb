"""What the machine offers and how it is confined: processes, the sandbox, the environment
children get, secrets, and signals.
"""
