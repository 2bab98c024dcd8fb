"""What people read, shared by the command line and the board: plan views, progress, and
safe terminal output.
"""
