"""Solution: one encoder block's multiply-adds."""


def block_macs(tokens, d, mlp_ratio=4.0):
    hidden = int(d * mlp_ratio)
    projections = 4 * tokens * d * d          # Q, K, V and the output, each (N, d) x (d, d)
    mlp = 2 * tokens * d * hidden             # (N, d) x (d, h) and (N, h) x (h, d)
    attention = 2 * tokens * tokens * d       # Q K^T and the weights times V, each N^2 d
    return projections + mlp, attention
