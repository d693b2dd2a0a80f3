"""The only code that changes lobby state: seeks, challenges and the lobby feed."""
