"""Message channels between queue managers (issue 19; docs/distributed.md).

A message channel agent is an ordinary user of the engine on one side and a driver of a
channel machine (ferrymq.protocol.channel) on the other: ``sender`` takes batches from a
transmission queue under a unit of work that it prepares (engine.xa) before asking the
receiver to commit; ``receiver`` puts what arrives under its own unit of work with the
batch's synchronisation record on SYSTEM.CHANNEL.SYNCQ and confirms once that is durable;
``initiator`` runs listeners and agents and carries out the channel commands.
"""

from ferrymq.channels.host import EngineHost
from ferrymq.channels.initiator import ChannelInitiator

__all__ = ["ChannelInitiator", "EngineHost"]
