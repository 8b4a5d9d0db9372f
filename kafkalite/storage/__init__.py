"""Partition logs on disk: segments, indexes, recovery, retention, epochs, producer state.

Nothing here touches the network; the broker's event loop owns every object and calls
them synchronously (file I/O on a local disk is fast next to a network round trip).
"""
