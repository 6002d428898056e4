"""The `kata` command and what it shows: the command line (cli), its commands for practice and drills (practice,
live, listing, completion), the views (report, statement, terminal), what is said when a dependency is missing
(environment), and the contributors' tools (dev: `python -m checker.app.dev`)."""
