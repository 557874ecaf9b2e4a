"""Words every surface shares (status names, demand statuses, urgencies, dates) in en and es.

Feature modules keep their own sentences beside their code; this holds only the vocabulary
that must read the same in chat, briefings and on the web page.
"""

from __future__ import annotations

from datetime import date, datetime

from bot.models import DemandStatus, Status, Urgency

LANGUAGES = ("en", "es")

STATUS_LABELS: dict[str, dict[Status, str]] = {
    "en": {
        Status.BARGAINING: "Bargaining",
        Status.STRIKE_VOTE: "Strike vote",
        Status.STRIKE_ON: "On strike",
        Status.TALKS_SCHEDULED: "On strike — talks scheduled",
        Status.TENTATIVE_AGREEMENT: "Tentative agreement",
        Status.RATIFICATION_VOTE: "Ratification vote",
        Status.STRIKE_SUSPENDED: "Strike suspended",
        Status.STRIKE_OVER: "Strike over",
    },
    "es": {
        Status.BARGAINING: "Negociación",
        Status.STRIKE_VOTE: "Votación de huelga",
        Status.STRIKE_ON: "En huelga",
        Status.TALKS_SCHEDULED: "En huelga — negociaciones programadas",
        Status.TENTATIVE_AGREEMENT: "Acuerdo tentativo",
        Status.RATIFICATION_VOTE: "Votación de ratificación",
        Status.STRIKE_SUSPENDED: "Huelga suspendida",
        Status.STRIKE_OVER: "Huelga terminada",
    },
}

# Hex colours per status, shared by Discord embeds, Slack attachments and the web page.
STATUS_COLOURS: dict[Status, int] = {
    Status.BARGAINING: 0x1F6FB2,
    Status.STRIKE_VOTE: 0x7A3DB8,
    Status.STRIKE_ON: 0xC8102E,
    Status.TALKS_SCHEDULED: 0xD9480F,
    Status.TENTATIVE_AGREEMENT: 0x2B8A3E,
    Status.RATIFICATION_VOTE: 0x5C940D,
    Status.STRIKE_SUSPENDED: 0x868E96,
    Status.STRIKE_OVER: 0x2F9E44,
}

DEMAND_STATUS_LABELS: dict[str, dict[DemandStatus, str]] = {
    "en": {
        DemandStatus.OPEN: "Open",
        DemandStatus.OFFER_ON_TABLE: "Offer on the table",
        DemandStatus.TENTATIVE_AGREEMENT: "Tentative agreement",
        DemandStatus.WON: "Won",
        DemandStatus.WITHDRAWN: "Withdrawn",
    },
    "es": {
        DemandStatus.OPEN: "Abierta",
        DemandStatus.OFFER_ON_TABLE: "Oferta sobre la mesa",
        DemandStatus.TENTATIVE_AGREEMENT: "Acuerdo tentativo",
        DemandStatus.WON: "Ganada",
        DemandStatus.WITHDRAWN: "Retirada",
    },
}

URGENCY_LABELS: dict[str, dict[Urgency, str]] = {
    "en": {Urgency.ROUTINE: "Routine", Urgency.IMPORTANT: "Important", Urgency.URGENT: "Urgent"},
    "es": {Urgency.ROUTINE: "Rutina", Urgency.IMPORTANT: "Importante", Urgency.URGENT: "Urgente"},
}

_WEEKDAYS = {
    "en": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "es": ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"],
}
_MONTHS = {
    "en": [
        "January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December",
    ],
    "es": [
        "enero", "febrero", "marzo", "abril", "mayo", "junio",
        "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre",
    ],
}  # fmt: skip


def pick(language: str | None) -> str:
    """A supported language for `language` (a code or a locale such as es-ES), else en."""
    if language:
        code = language.replace("_", "-").split("-")[0].lower()
        if code in LANGUAGES:
            return code
    return "en"


def status_label(status: Status, language: str) -> str:
    return STATUS_LABELS[pick(language)][status]


def demand_status_label(status: DemandStatus, language: str) -> str:
    return DEMAND_STATUS_LABELS[pick(language)][status]


def urgency_label(urgency: Urgency, language: str) -> str:
    return URGENCY_LABELS[pick(language)][urgency]


def format_date(day: date, language: str, today: date | None = None) -> str:
    """'Monday, January 14' / 'lunes 14 de enero'; with the year ('Monday, January 14,
    2019' / 'lunes 14 de enero de 2019') when `today` is given and in another year."""
    lang = pick(language)
    weekday = _WEEKDAYS[lang][day.weekday()]
    month = _MONTHS[lang][day.month - 1]
    year = today is not None and day.year != today.year
    if lang == "es":
        return f"{weekday} {day.day} de {month}" + (f" de {day.year}" if year else "")
    return f"{weekday}, {month} {day.day}" + (f", {day.year}" if year else "")


def format_time(moment: datetime, language: str) -> str:
    """'6:00 AM' / '6:00' (local time already applied by the caller)."""
    if pick(language) == "es":
        return f"{moment.hour}:{moment.minute:02d}"
    hour = moment.hour % 12 or 12
    return f"{hour}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"


def format_datetime(moment: datetime, language: str, today: date | None = None) -> str:
    """'Monday, January 21, 6:00 AM PST' / 'lunes 21 de enero, 6:00 PST' (the year too when
    `today` is given and in another year)."""
    zone = moment.tzname() or ""
    day = format_date(moment.date(), language, today)
    return f"{day}, {format_time(moment, language)} {zone}".strip()


FAMILY_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "title": "For families",
        "strike_today": "Is the strike on today?",
        "yes_day": "Yes: day {n} of the strike.",
        "yes": "Yes.",
        "no": "No. {status}.",
        "schools": "Are schools open?",
        "schools_open": "Yes, schools are open.",
        "schools_closed": "No, schools are closed.",
        "meals": "Meals",
        "ask": "Questions?",
    },
    "es": {
        "title": "Para las familias",
        "strike_today": "¿Hay huelga hoy?",
        "yes_day": "Sí: día {n} de la huelga.",
        "yes": "Sí.",
        "no": "No. {status}.",
        "schools": "¿Están abiertas las escuelas?",
        "schools_open": "Sí, las escuelas están abiertas.",
        "schools_closed": "No, las escuelas están cerradas.",
        "meals": "Comidas",
        "ask": "¿Preguntas?",
    },
}


def family_word(key: str, language: str, **values: object) -> str:
    return FAMILY_WORDS[pick(language)][key].format(**values)


def day_of_strike(strike_start: date, today: date) -> int:
    """Day 1 is the day the strike began."""
    return (today - strike_start).days + 1
