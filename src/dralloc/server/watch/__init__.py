"""Watches: the fan-out hub off the write path and the stream each watch request gets."""
