"""The morning briefing: what it says (compose), when each channel's is due (times), firing the
schedule (schedule) and queueing each once per local date (runs).
"""
