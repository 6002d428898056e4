"""What the checks hand to the child or run in it: given layers and models (pickled into the child
whole, so they must be importable there by name), and drivers, called as driver(user_module, *args)
through Kit.drive. Drivers return plain values and never judge; the parent compares.

The child runs drivers from this package, and a kata's own driver module (sandbox.child.driver_allowed).
"""
