"""Audiences: the sites of a campaign (a school, a worksite, a depot) in groups (a local
district, a region, a campus), whom an update addresses and what a subscription follows.
docs/audiences.md states the rules; the store's `bot.store.sites` holds the one query that
says who an audience reaches.
"""

from bot.audiences.codes import check_code, parse_audience, parse_follows
from bot.audiences.files import SiteFile, read_sites_csv
from bot.audiences.picker import PlaceIndex, PlaceMatch, PlacePicker
from bot.audiences.sites import Imported, PlaceLatest, SiteIndex, SiteNews, Sites

__all__ = [
    "Imported",
    "PlaceIndex",
    "PlaceLatest",
    "PlaceMatch",
    "PlacePicker",
    "SiteFile",
    "SiteIndex",
    "SiteNews",
    "Sites",
    "check_code",
    "parse_audience",
    "parse_follows",
    "read_sites_csv",
]
