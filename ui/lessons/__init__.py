"""Each lesson's Streamlit layer: its cached computations, figures, page sections and the data its
browser views are sent. A package per lesson (`tokenization`, `embeddings`, `position`,
`attention`, `block`, `sampling`, `kvcache`, `compare`) and for `differs`, the sections each lesson
adds on a model that departs from the Llama recipe: each with its `figures` (plotly figures from
data and already-translated labels, no streamlit, tested alone) and its `sections` (widgets, caches,
what the views are sent), and `compute` beside them where the lesson is large. `numbers`, whose
figures are ui.views.figures', is one module. The lessons' algorithms themselves are in lib/lessons.
"""
