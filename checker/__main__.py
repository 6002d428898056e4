"""The `kata` command (`python -m checker` too): checker.cli, or a clear word about the environment when one of
kata's dependencies cannot be imported (checker.environment, standard library only)."""

import sys

from checker.errors import EXIT_USAGE


def main() -> None:
    try:
        from checker import cli
    except Exception as err:  # noqa: BLE001 - said below when it is a dependency's; else raised as it is
        from checker import environment

        if environment.broken_dependency(err) is None:
            raise
        environment.say(err)
        sys.exit(EXIT_USAGE)
    cli.run()


if __name__ == "__main__":
    main()
