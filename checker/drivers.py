"""Harness code that runs in the child process and drives the user's code (see Kit.drive).

A driver is called as driver(user_module, *args) and returns plain values (tensors, numbers,
lists), which the parent judges. Drivers never judge anything themselves.
"""
