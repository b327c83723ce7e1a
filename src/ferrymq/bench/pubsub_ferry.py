"""Publish/subscribe on ferrymq through the Pythonic client's ``publish`` and
``subscribe``: one topic string per run, non-durable (managed) subscriptions for the
non-persistent fan-out, durable ones for the persistent fan-out.
"""

from __future__ import annotations

from ferrymq.bench.contender import PUBSUB, PUBSUB_PERSISTENT

KINDS = frozenset({PUBSUB, PUBSUB_PERSISTENT})
GUARANTEES = {
    PUBSUB: "non-persistent publications, a non-durable subscription per subscriber",
    PUBSUB_PERSISTENT: "persistent publications, a durable subscription per subscriber: fdatasync'd before "
                       "the publisher's puts count and each subscriber's gets are committed",
}


def missing() -> str | None:
    """Why the client cannot publish and subscribe here, or None."""
    from ferrymq.client import Client

    if not (hasattr(Client, "publish") and hasattr(Client, "subscribe")):
        return "publish/subscribe: not in ferrymq.client yet (Client.publish, Client.subscribe)"
    return None
