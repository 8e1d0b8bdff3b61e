"""The position lesson (pages/04_position.py): the shuffled sentence, RoPE's rotation, angles and
relative scores, the live layer's queries and keys, GPT-2's learned table (`sections`: widgets,
cached data and what the browser view is sent), drawn by `figures` where the server draws.
"""
