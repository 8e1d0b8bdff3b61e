"""The KV-cache lesson (pages/08_kvcache.py): the calculator and what prices its choice, drawn in the
browser from what `sections` sends, the fact check, the cache and the timings measured on the live
model, and the parameters; the server's own figures are drawn by `figures`.
"""
