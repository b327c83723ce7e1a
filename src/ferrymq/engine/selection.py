"""Selection on MQOPEN: the SelectionString rules, and the view of a queue a selecting handle sees.

A handle opened with a selection string gets a ``SelectionView`` on its queue. The view
remembers which messages match, so a get does not evaluate the selector over the whole
queue again: each message is evaluated at most once while it stays on the queue, and a
get costs O(messages new to the view + matching messages skipped) amortised.

Why remembering is sound: the properties and MQMD fields a selector reads do not change
while a message is on the queue. The one change, BackoutCount, happens to a message that
was got under syncpoint and is backed out; it returns through ``MessageQueue.insert``,
which hands it to the view to be evaluated again.

State of a view over its queue (``frontier`` is a key in delivery order):

- messages present when the handle opened are evaluated lazily, in delivery order, by a
  scan that stops at the first match a get needs; ``frontier`` is the last key it reached
  (``done`` once it has passed the end of the queue);
- ``pending`` holds messages that entered the queue later, evaluated at the next get on the
  handle; one beyond the frontier is left to the scan, which will reach it;
- ``matched`` holds the keys at or before the frontier of messages that match and are on
  the queue (a removal takes its key out at once).
"""

from __future__ import annotations

from collections.abc import Iterator

from sortedcontainers import SortedSet

from ferrymq.engine.message import Message
from ferrymq.engine.msgqueue import Key, MessageQueue
from ferrymq.engine.selector import Selector, SelectorError, compile_selector, message_lookup
from ferrymq.errors import failed
from ferrymq.mq import constants as C

_READS = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE | C.MQOO_BROWSE


def selector_for_open(text: str, object_type: int, options: int) -> Selector | None:
    """The compiled SelectionString of an MQOPEN, or None when it selects nothing out.

    An empty string (or blanks only: JMS treats an empty selector as none) means no
    selection.

    Raises:
        MQError: MQRC_SELECTOR_INVALID_FOR_TYPE (not a queue, or not opened to get or
            browse), MQRC_SELECTION_STRING_ERROR (longer than MQ_SELECTOR_LENGTH bytes),
            MQRC_SELECTOR_SYNTAX_ERROR, MQRC_SELECTOR_ALWAYS_FALSE.
    """
    if not text.strip():
        return None
    if object_type != C.MQOT_Q or not options & _READS:
        raise failed(C.MQRC_SELECTOR_INVALID_FOR_TYPE,
                     "a SelectionString needs ObjectType MQOT_Q opened with MQOO_INPUT_* or MQOO_BROWSE")
    size = len(text.encode("utf-8"))
    if size > C.MQ_SELECTOR_LENGTH:
        raise failed(C.MQRC_SELECTION_STRING_ERROR,
                     f"the SelectionString is {size} bytes; MQ_SELECTOR_LENGTH is {C.MQ_SELECTOR_LENGTH}")
    try:
        return compile_selector(text)
    except SelectorError as exc:
        raise failed(exc.reason, f"SelectionString: {exc}") from None


class SelectionView:
    """The messages of one queue that one handle's selector accepts (see the module doc)."""

    __slots__ = ("done", "evaluations", "frontier", "matched", "messages", "pending", "selector")

    def __init__(self, selector: Selector, messages: MessageQueue) -> None:
        self.selector = selector
        self.messages = messages
        self.matched: SortedSet = SortedSet()
        self.pending: list[Message] = []
        self.frontier: Key | None = None
        self.done = not len(messages)
        self.evaluations = 0  # selector evaluations so far: how tests and bench/ see the cost

    # -- told by the queue (MessageQueue.watchers) ------------------------------------------
    def inserted(self, msg: Message) -> None:
        self.pending.append(msg)
        if len(self.pending) > 2 * len(self.messages) + 64:
            # Nobody has got through this handle for a while: forget what has left the queue,
            # so that an idle selecting handle on a busy queue holds no more than the queue.
            by_seq = self.messages.by_seq
            self.pending = [m for m in self.pending if by_seq.get(m.seq) is m]

    def removed(self, msg: Message) -> None:
        self.matched.discard(msg.key)

    # -- asked by a get ---------------------------------------------------------------------
    def keys(self, after: Key | None) -> Iterator[Key]:
        """Keys of matching messages in delivery order, strictly after ``after`` (which is
        None or a key this view returned). The caller must not change the queue while it
        iterates; it may stop at any point."""
        self._drain()
        matched = self.matched
        yield from matched.irange(minimum=after, inclusive=(False, True))
        if self.done:
            return
        messages = self.messages
        for key in messages.keys_after(self.frontier):
            self.frontier = key
            msg = messages.get(key)
            if msg is not None and self._test(msg):
                matched.add(key)
                if after is None or key > after:
                    yield key
        self.done = True

    def accepts(self, msg: Message) -> bool:
        """Whether a message found by other means (an identifier index) matches."""
        self._drain()
        key = msg.key
        if self.done or (self.frontier is not None and key <= self.frontier):
            return key in self.matched
        return self._test(msg)  # not reached by the scan yet: the scan will remember it

    def _drain(self) -> None:
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        by_seq = self.messages.by_seq
        matched = self.matched
        for msg in pending:
            if by_seq.get(msg.seq) is not msg:
                continue  # gone again before this handle looked
            key = msg.key
            if not self.done and (self.frontier is None or key > self.frontier):
                continue  # the scan has still to reach it
            if self._test(msg):
                matched.add(key)
            else:
                matched.discard(key)  # evaluated again after a backout changed it

    def _test(self, msg: Message) -> bool:
        self.evaluations += 1
        return self.selector.matches(message_lookup(msg))
