"""The compare page (pages/10_compare.py): the built-in models side by side, their numbers, the same
text through both tokenizers and both next-token distributions (`sections`, which other lessons'
"what differs" sections reuse), drawn by `figures`.
"""
