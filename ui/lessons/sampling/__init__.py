"""The sampling lesson (pages/07_sampling.py): the next-token distribution and its filters, answered
in the browser, a generation step by step with its timings, and the loss of the learner's text
(`sections`: widgets, cached runs and what the browser view is sent), drawn by `figures` where the
server draws.
"""
