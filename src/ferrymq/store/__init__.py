"""L1: the store — a record journal with a memory and a file implementation.

The journal knows records and transactions, not queues: the engine maps messages,
units of work and object definitions onto records (the split ActiveMQ Artemis keeps).
"""
