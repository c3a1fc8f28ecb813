"""How the provider tests configure and build each bundled provider against its fake (one module each)."""
