"""TLS rules shared by the queue manager, its clients and its channels (no sockets here).

- ``cipherspecs``: IBM MQ's CipherSpec names (SSLCIPH, the MQCD's SSLCipherSpec) and the
  OpenSSL settings and negotiated results each one stands for;
- ``names``: distinguished names as IBM MQ shows them, and SSLPEER/SSLPeerName patterns;
- ``keyrepo``: a key repository of PEM files (SSLKEYR, the MQSCO's KeyRepository) and the
  ``ssl.SSLContext`` made from it for either end of a connection;
- ``devcerts``: certificates for development and tests (the ``cryptography`` package).

The drivers (server, clients, channels) put these to work on their transports.
"""
