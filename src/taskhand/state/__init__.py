"""Durable state: the SQLite store, its typed rows and events, where state lives, the lock."""
