"""The block lesson (pages/06_block.py): the block's diagram, its norms, the residual stream, the
MLP and the logit lens (`lens_service`, the server's one lens service).
"""
