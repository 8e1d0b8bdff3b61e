"""The tokenization lesson (pages/02_tokenization.py): BPE trained on a corpus, the model's own
merges replayed, Italian beside English (`sections`: the cached training and replay and what the
browser views are sent), drawn by `figures` where the server draws.
"""
