"""The lifecycle as data: the stages an attempt goes through, each a function of one signature,
and the pipelines that list them. The run loop executes whatever stage an attempt is in.
"""
