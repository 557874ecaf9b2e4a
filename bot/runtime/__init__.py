"""Running the bot: the composition root (app), what a plugin's factory receives (context),
logging, seeding the campaign, export and import, and the doctor's checks.
"""
