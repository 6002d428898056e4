"""Runs in the child: the user's arithmetic functions over a list of calls, in one round trip.

Drivers never judge: they return what the user's code returned, the parent compares (see Kit.drive).
"""


def arithmetic_values(user, calls):
    """[getattr(user, name)(*args, **kwargs) for name, args, kwargs in calls], as the user's code returns them."""
    return [getattr(user, name)(*args, **kwargs) for name, args, kwargs in calls]
