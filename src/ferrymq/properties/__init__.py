"""L0: message properties — typed values (``PropertySet``), IBM's name and conversion rules,
message-handle semantics (MQSETMP/MQINQMP/MQDLTMP) and their MQRFH2 folder form."""

from ferrymq.properties.handle import Inquired, MessageHandleState, ValueTooBig
from ferrymq.properties.model import Descriptor, Property, PropertySet

__all__ = ["Descriptor", "Inquired", "MessageHandleState", "Property", "PropertySet", "ValueTooBig"]
