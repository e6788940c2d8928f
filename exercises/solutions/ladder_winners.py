"""Solution: which worlds of the crossover ladder the ViT wins."""


def ladder_winners(cnn, vit_plain):
    # every world of the ladder is absorbed: the ViT scores vit_plain in each
    return [world for world, accuracy in cnn.items() if vit_plain > accuracy]
