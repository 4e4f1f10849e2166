"""The HTTP pages and fragments."""
