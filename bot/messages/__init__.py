"""The platform-neutral message composed from core data (compose), and the answers families ask
first (families).
"""
