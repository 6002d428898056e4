"""Runs the user's code in a child process and carries values back safely.

The parent (parent.Sandbox, the checker's side) starts one child per kata check (processes: fork on Linux,
forkserver on macOS, spawn on Windows). The child (child.py) imports the user's file and serves requests: `load`,
`inspect`, `call`, `drive`. Everything it sends back is a tree of plain values (wire.py), unpickled with a loader
that refuses every global, so nothing the user's code does can reach the parent, the references or the
comparisons. Inside the child, boundary.py's audit hook keeps the user's code off kata's files and the network,
rules.py traps a kata's off-limits functions, and world.py puts back what a call changed in its caller's world;
preload.py is what the fork server imports once; meta_kernels.py readies the device check.

The errors both sides raise live in checker.errors. The package itself imports nothing: import the module you
need (checker.sandbox.parent for Sandbox).
"""
