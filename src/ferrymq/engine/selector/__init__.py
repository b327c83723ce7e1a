"""Message selectors: the SQL-92 subset IBM MQ and JMS define for selection strings.

``compile_selector(text)`` parses once and returns a ``Selector`` whose ``matches(lookup)``
evaluates a closure tree; nothing is re-parsed per message and nothing is ever eval'd.
"""

from ferrymq.engine.selector.errors import SelectorError
from ferrymq.engine.selector.evaluate import Selector, compile_selector
from ferrymq.engine.selector.fields import message_lookup

__all__ = ["Selector", "SelectorError", "compile_selector", "message_lookup"]
