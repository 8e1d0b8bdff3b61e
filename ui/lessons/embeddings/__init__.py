"""The embeddings lesson (pages/03_embeddings.py): the model's table and its rows, words compared
by cosine, the neighbours and the projection, row lengths, the same word through the layers and
whole sentences compared (`sections`, with the caches and what the browser view is sent), drawn by
`figures`.
"""
