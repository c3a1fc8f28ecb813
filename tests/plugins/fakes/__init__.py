"""Local fake HTTP servers (127.0.0.1) for the external memory providers' contract tests."""
