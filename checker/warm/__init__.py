"""A check that starts warm: the resident checker of a workspace (server, client) and `-j`'s workers (parallel).

Each runs engine.check_file as a single `kata check` does, in a process that has imported torch already; the
`kata` command prints the report and records the history itself, from the results they hand back.
"""
