"""The broker process: asyncio server, request handlers, introspection endpoint."""
