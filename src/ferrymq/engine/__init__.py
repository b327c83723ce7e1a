"""L2: the queue manager itself — objects, messages, MQI semantics, units of work.

Synchronous and deterministic: time comes from a Clock, durability is staged in the
journal and awaited by the L3 driver (see QueueManager.take_sync_lsn).
"""
