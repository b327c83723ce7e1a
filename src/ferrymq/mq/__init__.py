"""L0: IBM MQ constants with IBM's exact names and values, and typed enums over them."""

from ferrymq.mq.enums import (
    MQCC,
    MQCO,
    MQENC,
    MQFB,
    MQGMO,
    MQMF,
    MQMO,
    MQMT,
    MQOO,
    MQPER,
    MQPMO,
    MQRC,
    MQRO,
)

__all__ = ["MQCC", "MQCO", "MQENC", "MQFB", "MQGMO", "MQMF", "MQMO", "MQMT", "MQOO", "MQPER", "MQPMO", "MQRC", "MQRO"]
