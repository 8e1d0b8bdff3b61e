"""The lessons' algorithms: each lesson's computation, returned as data a page shows.

One module per idea (`bpe` and `bpe_replay` for tokenization, `embeddings`, `rope`, `attention`,
`bertviz_view`, `block`, `logit_lens`, `loss`, `sampling` and `generate`, `kvcache`, `compare`),
plus the published model configs the tables compare (`reference`) and the colour check the charts
pass (`colour_vision`). They work on a loaded model or a capture from lib/model, never on a page.
"""
