"""The plan as data and as files: the model, its two dialects, validation and scheduling.

Imports nothing of taskhand outside itself but the base leaves (`errors`, `text`).
"""
