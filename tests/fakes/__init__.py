"""Fake platform servers on 127.0.0.1 that real client libraries talk to in tests."""
