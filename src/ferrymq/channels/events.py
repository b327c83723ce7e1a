"""The channel events of one channel instance, put through the engine's instrumentation
events (engine.events, switched by the queue manager's CHLEV).

IBM's rules kept here: Channel Stopped follows only an instance that reached RUNNING
(Channel Started, whether or not CHLEV let that one through), once per instance; and an
event never fails the channel: a refusal to put it is logged and the agent goes on. After
each event the driver is told (``host.done()``) so that a get waiting on the event queue
is answered and a persistent event is written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ferrymq.channels.host import EngineHost
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F

log = logging.getLogger("ferrymq.channels")


class ChannelEvents:
    """``xmitq``: the transmission queue of a sending channel, blank for a receiving one."""

    def __init__(self, host: EngineHost, channel: str, xmitq: str = "") -> None:
        self.host = host
        self.channel = channel
        self.xmitq = xmitq
        self.conn_name = ""
        self.running = False  # this instance reached RUNNING and has not reported its end

    def _put(self, make: Callable[[], None]) -> None:
        try:
            make()
        except MQError as exc:  # the event queue refused it: the channel goes on all the same
            log.warning("event=channel_event_undeliverable channel=%s reason=%d", self.channel, exc.reason)
        self.host.done()

    def started(self, conn_name: str) -> None:
        """The instance reached RUNNING, talking to ``conn_name``."""
        self.running, self.conn_name = True, conn_name
        events = self.host.qmgr.events
        self._put(lambda: events.channel_started(self.channel, self.xmitq, conn_name))

    def stopped(self, qualifier: int, error: int = 0, detail: str = "") -> None:
        """The instance ended (MQRQ_CHANNEL_STOPPED_*); nothing if it never reached RUNNING
        or already reported its end."""
        if not self.running:
            return
        self.running = False
        events = self.host.qmgr.events
        self._put(lambda: events.channel_stopped(self.channel, qualifier, self.xmitq, self.conn_name, error=error,
                                                 detail=detail))

    def stopped_by_user(self) -> None:
        """STOP CHANNEL ends this instance."""
        events = self.host.qmgr.events
        self._put(lambda: events.channel_stopped_by_user(self.channel))

    def ssl_error(self, qualifier: int, conn_name: str, *, stage: str = "", return_code: int = 0,
                  peer_name: str = "") -> None:
        """Channel SSL Error (SSLEV): this channel's TLS did not let it start (MQRQ_SSL_*)."""
        events = self.host.qmgr.events
        self._put(lambda: events.channel_ssl_error(qualifier, self.channel, conn_name, xmitq=self.xmitq, stage=stage,
                                                   return_code=return_code, peer_name=peer_name))

    def ssl_warning(self, qualifier: int, conn_name: str) -> None:
        """Channel SSL Warning (SSLEV): a TLS problem that let this channel start (MQRQ_SSL_UNKNOWN_REVOCATION)."""
        events = self.host.qmgr.events
        self._put(lambda: events.channel_ssl_warning(qualifier, self.channel, conn_name, xmitq=self.xmitq))

    def conversion_error(self, reason: int, fmt: str) -> None:
        """A message of format ``fmt`` did not convert (``reason``) and is sent as it was."""
        events = self.host.qmgr.events
        self._put(lambda: events.channel_conversion_error(self.channel, reason, fmt, self.xmitq, self.conn_name))


def ended_qualifier(stopped: bool, error: bool) -> int:
    """How a channel instance ended, as Channel Stopped's ReasonQualifier: left STOPPED
    (STOP CHANNEL, retries run out) DISABLED; otherwise in error ERROR; else OK."""
    if stopped:
        return F.MQRQ_CHANNEL_STOPPED_DISABLED
    return F.MQRQ_CHANNEL_STOPPED_ERROR if error else F.MQRQ_CHANNEL_STOPPED_OK
