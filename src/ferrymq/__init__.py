"""ferrymq: a message-queueing system with IBM MQ's semantics, written in Python."""

__version__ = "0.1.0"
