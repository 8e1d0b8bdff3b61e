"""Each lesson's Streamlit layer: its cached computations, figures, page sections and the data its
browser views are sent. One module per lesson (`numbers`, `tokenization`, `embeddings`,
`position`, `sampling`, `kvcache`, `compare`), a package for a lesson too large for one (`attention`,
`block`: compute, figures, sections), and `differs`, the sections each lesson adds on a model that
departs from the Llama recipe. The lessons' algorithms themselves are in lib/lessons.
"""
