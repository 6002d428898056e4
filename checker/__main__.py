from checker.environment import run

run()
