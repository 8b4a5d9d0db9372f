import no_such_module  # noqa: F401


def double(x):
    return 2 * x
