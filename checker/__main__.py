"""The `kata` command (`python -m checker` too): checker.app.cli, or a clear word about the environment when one of
kata's dependencies cannot be imported (checker.app.environment, standard library only)."""

import sys

from checker.errors import EXIT_USAGE


def main() -> None:
    _stacks_on_sigusr1()
    try:
        from checker.app import cli
    except Exception as err:  # noqa: BLE001 - said below when it is a dependency's; else raised as it is
        from checker.app import environment

        if environment.broken_dependency(err) is None:
            raise
        environment.say(err)
        sys.exit(EXIT_USAGE)
    cli.run()


def _stacks_on_sigusr1() -> None:
    """`kill -USR1 PID` prints every thread's stack to stderr, for a kata that seems stuck (POSIX only)."""
    import faulthandler
    import signal

    if hasattr(signal, "SIGUSR1"):
        try:
            faulthandler.register(signal.SIGUSR1, all_threads=True)
        except (ValueError, OSError, RuntimeError):  # stderr closed or not a real file: no dump, nothing else
            pass


if __name__ == "__main__":
    main()
