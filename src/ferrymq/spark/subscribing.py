"""A topic read's durable subscription: made (or checked) on the driver, then read as a queue.

Option ``topic`` reads the publications of a durable subscription named by option
``subscription``. The driver makes it with MQSUB (MQSO_CREATE | MQSO_ALTER | MQSO_DURABLE |
MQSO_MANAGED): the queue manager creates it when it does not exist, or alters the existing
one to the query's definition, refusing with IBM's reasons what a subscription cannot
change (its topic and wildcard scheme, 2510; its selector, 2524; its durability, 2509;
managed against a queue of its own, 2533). The handle is closed at once with
MQCO_KEEP_SUB: the subscription goes on collecting publications on its managed queue
while the query is stopped, and the query reads that queue exactly as a queue read does
(browse by sequence, removal once Spark has committed: ferrymq.spark.streaming), so a
topic read is replayable and exactly-once as queue reads are.
"""

from __future__ import annotations

from ferrymq.client import Client, mqi
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.spark.options import FerryOptions

_WILDCARDS = {"topic": C.MQSO_WILDCARD_TOPIC, "char": C.MQSO_WILDCARD_CHAR}
_OPTIONS = C.MQSO_CREATE | C.MQSO_ALTER | C.MQSO_DURABLE | C.MQSO_MANAGED | C.MQSO_FAIL_IF_QUIESCING

# What an existing subscription cannot become, said for someone reading the query's error.
_RULES = {
    C.MQRC_TOPIC_NOT_ALTERABLE: "a subscription's topic string and wildcard scheme cannot change",
    C.MQRC_SELECTOR_NOT_ALTERABLE: "a subscription's selector cannot change",
    C.MQRC_DURABILITY_NOT_ALTERABLE: "a non-durable subscription cannot become durable",
    C.MQRC_DEST_CLASS_NOT_ALTERABLE: "it delivers to a queue of its own, not a managed one: read that queue with "
                                     "option queue instead",
    C.MQRC_SUBSCRIPTION_IN_USE: "an application (or another query) has it open: one reader per subscription",
}


class SubscriptionError(MQError):
    """The query's subscription could not be made or resumed as the options define it."""


def subscription_request(opts: FerryOptions) -> E.Sub:
    """The MQSUB of a topic read (see the module docstring)."""
    return E.Sub(0, _OPTIONS | _WILDCARDS[opts.wildcards], object_string=opts.topic, sub_name=opts.subscription,
                 selection_string=opts.selector)


def subscription_queue(client: Client, opts: FerryOptions) -> str:
    """The managed queue of the query's durable subscription, made or altered first; the
    subscription is left in place, closed (MQCO_KEEP_SUB).

    Raises:
        SubscriptionError: the queue manager refused, with IBM's reason and what to do
            when an existing subscription differs from the options.
    """
    try:
        reply = mqi.mqsub(client, subscription_request(opts))
    except MQError as exc:
        rule = _RULES.get(exc.reason)
        where = f"subscription {opts.subscription!r} (topic {opts.topic!r}"
        where += f", selector {opts.selector!r})" if opts.selector else ")"
        if rule is None:
            text = f"cannot read {where}: {exc.detail}"
        elif exc.reason == C.MQRC_SUBSCRIPTION_IN_USE:
            text = f"cannot read {where}: {rule}"
        else:  # every read repeats the subscription's definition: the options say what it is
            text = (f"cannot read {where}: it exists with another definition and {rule}; give the options it was "
                    "made with, delete it (DELETE SUB) or name another subscription")
        raise SubscriptionError(exc.comp, exc.reason, text) from exc
    try:
        mqi.mqclose(client, reply.hsub, C.MQCO_KEEP_SUB)
    finally:
        mqi.mqclose(client, reply.hobj)
    return reply.queue_name


def reading_queues(client: Client, opts: FerryOptions) -> tuple[str, ...]:
    """The queues a read consumes: option queue's, or the topic subscription's queue."""
    if opts.topic:
        return (subscription_queue(client, opts),)
    return opts.queues
