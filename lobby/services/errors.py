class LobbyError(Exception):
    """A refused lobby request; `code` is the protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
