"""Solution: every parameter of a ViT, by part."""


def parameter_counts(config):
    d, P = config.embed_dim, config.patch_size
    hidden = int(d * config.mlp_ratio)
    prefix = int(config.class_token) + config.reg_tokens
    tokens = (config.img_size // P) ** 2 + prefix
    # attention, MLP, two LayerNorms
    block = (4 * d * d + 4 * d) + (2 * d * hidden + hidden + d) + 4 * d
    parts = {
        "patch embedding": config.in_chans * P * P * d + d,
        "[CLS] token": d if config.class_token else 0,
        "register tokens": config.reg_tokens * d,
        "position table": tokens * d if config.pos_embed else 0,
        "encoder blocks": config.depth * block,
        "final LayerNorm": 2 * d,
        "head": d * config.num_classes + config.num_classes,
    }
    parts["total"] = sum(parts.values())
    return parts
