"""The attention lesson (pages/05_attention.py): every head of the live model, the formula with its
real numbers, GQA, the mask, the cost and flash attention.
"""
