"""The webhooks plugin's name, shared by its declaration and its adapter (it has no
settings of its own: endpoints are added with `strikebot webhooks add`)."""

NAME = "webhooks"
