"""L3: the Pythonic client — ``Client``/``Queue`` (blocking) and ``AsyncClient``/``AsyncQueue``.

Both run one protocol logic (``session`` over the sans-IO ``ClientConnection``); they
differ only in how bytes move. The client never imports the engine or the server:
bindings mode (an embedded queue manager) is wired in ``ferrymq.api``.
"""

from ferrymq.client.aio import AsyncClient, AsyncQueue, connect_async
from ferrymq.client.aio_subscription import AsyncSubscription
from ferrymq.client.connname import parse_conn_name
from ferrymq.client.distlist import (
    AsyncDistributionList,
    DistributionList,
    DistributionListError,
    ListResult,
    PutRecord,
    Response,
)
from ferrymq.client.errors import (
    BackedOut,
    ConnectionBroken,
    HandleError,
    Inhibited,
    InvalidSelector,
    MessageTooBig,
    NoMessageAvailable,
    NotAuthorized,
    ObjectInUse,
    QueueFull,
    QueueManagerUnavailable,
    Quiescing,
    Truncated,
    UnknownObjectName,
    error_for,
)
from ferrymq.client.message import AsyncPutStatus, Message, PutResult
from ferrymq.client.subscription import Subscription
from ferrymq.client.sync import Client, Queue, connect
from ferrymq.client.tls import ClientTLS
from ferrymq.errors import MQError

__all__ = [
    "AsyncClient", "AsyncPutStatus", "AsyncQueue", "AsyncSubscription", "BackedOut", "Client", "ClientTLS", "ConnectionBroken",
    "AsyncDistributionList", "DistributionList", "DistributionListError", "HandleError", "ListResult", "PutRecord", "Response",
    "Inhibited", "InvalidSelector", "MQError", "Message", "MessageTooBig", "NoMessageAvailable", "NotAuthorized", "ObjectInUse",
    "PutResult", "Queue", "QueueFull", "QueueManagerUnavailable", "Quiescing", "Subscription", "Truncated", "UnknownObjectName",
    "connect", "connect_async", "error_for", "parse_conn_name",
]
