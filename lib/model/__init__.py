"""The model: loading it, running it with hooks, and what its config and tokenizer say about it.

`models` loads an embedded GGUF or a Hugging Face id (through `hub`, which does every download)
into one `LoadedModel`; `adapters` says where each family keeps its parts; `capture` runs one
forward pass with hooks and returns every activation; `arithmetic` counts parameters, memory and
FLOPs from a config; `features` names what a loaded model is; `tokens` shows tokens readably.
"""
