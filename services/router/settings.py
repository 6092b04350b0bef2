from violet.settings import VectorSettings


class RouterSettings(VectorSettings):
    """The router's settings: the common ones and its vector store's."""
