"""What a learner keeps and carries away, with no account and no name.

`progress_code` checks, merges and encodes quiz progress; `share_link` writes and reads links to a
lesson's view; `export` writes a capture as CSV or NPZ and the final quiz as a printable page.
"""
