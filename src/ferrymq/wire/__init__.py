"""L0: byte-exact codecs for IBM MQ structures, GPacket and ferrymq's own frames."""
