"""The I/O layer: informers, API writes, the queue and the scheduling loop that call `core`."""
