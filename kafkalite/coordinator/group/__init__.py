"""Consumer groups (classic protocol) and their committed offsets."""
