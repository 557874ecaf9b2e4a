"""Families and members reached one by one: sign-ups with double opt-in, their contact
addresses, and what is kept about them.
"""
