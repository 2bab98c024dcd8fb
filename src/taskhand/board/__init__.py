"""The board: a web view of a plan that a person steers, and its terminal twin (`watch`). A
projection of the store and the plan's files (the same reader as `show --json`), never a second
source of truth; every change is a person's move, made through the same library call as its
command.
"""
