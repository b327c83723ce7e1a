"""L4: benchmark runs of ferrymq beside the brokers users would pick instead (``ferrymq bench``)."""
