"""Queues of given PROPCTL values on an embedded queue manager, for the properties tests."""

from __future__ import annotations

from ferrymq.api import EmbeddedQueueManager


def define_propctl_queues(embedded: EmbeddedQueueManager, queues: dict[str, int]) -> EmbeddedQueueManager:
    """``embedded`` with a local queue of each name and PROPCTL value defined."""
    def define() -> None:
        assert embedded.qmgr is not None
        for name, propctl in queues.items():
            embedded.qmgr.objects.define("QLOCAL", name, {"PROPCTL": propctl})
    embedded.run(define)
    return embedded
