"""What admins write and how it is checked: the use cases behind every admin surface (updates,
demands, subscriptions), the rules text must meet, reading what people type, how far a post
will go, and the campaign's translations.
"""
