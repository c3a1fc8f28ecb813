"""Shared test helpers: the local HTTP server and the model fakes built on it."""
