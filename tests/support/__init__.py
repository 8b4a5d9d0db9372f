"""Test infrastructure kept apart from the tests: ports, clusters, client factories."""
