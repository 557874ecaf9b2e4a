"""Getting every copy out exactly once: which outbox rows a change creates (planning), the
dispatcher that claims, paces, sends and retries them, which instance sends for each
platform (leadership), what a refusal does to a channel, event documents for machines and
notices to admins.
"""
