"""sessions/importers package."""
