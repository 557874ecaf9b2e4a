"""Who receives what, beyond chat: webhook endpoints (add, list, remove, enable, test) and the
event documents they are sent.
"""
