"""The Slack adapter's own sentences (modal labels, progress notes), in English and Spanish.

Everything a command answers comes from `bot.commands` / `bot.locales`; these are only the
words of Slack's forms. Modal titles and buttons are at most 24 characters (Slack's limit).
"""

from __future__ import annotations

from bot.ports import i18n

_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "post_title": "Post an update",
        "edit_title": "Edit an update",
        "retract_title": "Retract an update",
        "approve_title": "Approve an update",
        "confirm_title": "Check and confirm",
        "done_title": "Done",
        "failed_title": "Not done",
        "working_title": "Working on it",
        "preview": "Preview",
        "next": "Next",
        "post": "Post it",
        "save": "Save changes",
        "retract": "Retract it",
        "approve": "Approve it",
        "cancel": "Cancel",
        "back": "Back",
        "close": "Close",
        "status": "Status",
        "urgency": "Urgency",
        "headline": "Headline",
        "headline_hint": "At most 150 characters; the rest goes in the body.",
        "body": "Body",
        "next_step": "Next step",
        "publish_at": "Publish at (leave empty to publish now)",
        "in_language": "{label} — Spanish (optional)",
        "update": "Update",
        "language": "Language to edit",
        "reason": "Reason (members will see it)",
        "correction": "Also post a visible correction note",
        "correction_yes": "Yes, tell the channels",
        "preview_intro_post": ("This is how members will see it. {reach}"),
        "preview_intro_scheduled": "This is how members will see it, from {when}.",
        "preview_intro_edit": "The update after your edit. Reason: {reason}",
        "preview_intro_edit_correction": (
            "The update after your edit; the channels also get a correction note. Reason: {reason}"
        ),
        "preview_intro_retract": "Every copy of update #{id} will be replaced by this.",
        "preview_intro_approve": "Approving publishes update #{id} as shown here.",
        "preview_footer": "Preview — nothing has been sent yet.",
        "draft_gone": (
            "This form was already submitted or has expired. Close it and start again with "
            "/strike {command}."
        ),
        "working": "Working on it… the answer will appear here in a moment.",
        "working_modal": "Still working on it. You will get a message here when it is done.",
        "nothing_to_pick": "There is no update to {command} right now.",
        "open_failed": "Slack did not open the form ({error}). Try /strike {command} again.",
        "pick_hint": "#{id} {headline}",
        "headline_required": "Write a headline.",
        "reason_required": "Give a reason; members will see it.",
        "past_time": "Pick a time in the future, or leave it empty to publish now.",
        "nothing_changed": "Change at least one thing, or press Cancel.",
        "state_pending": "awaiting approval",
        "state_scheduled": "scheduled",
        "state_retracted": "retracted",
        "did_not_fit": "The rest did not fit in Slack",
        "read_full_text": "read the full text",
    },
    "es": {
        "post_title": "Publicar actualización",
        "edit_title": "Editar actualización",
        "retract_title": "Retirar actualización",
        "approve_title": "Aprobar actualización",
        "confirm_title": "Revisar y confirmar",
        "done_title": "Hecho",
        "failed_title": "No se hizo",
        "working_title": "Procesando",
        "preview": "Vista previa",
        "next": "Siguiente",
        "post": "Publicar",
        "save": "Guardar cambios",
        "retract": "Retirar",
        "approve": "Aprobar",
        "cancel": "Cancelar",
        "back": "Volver",
        "close": "Cerrar",
        "status": "Estado",
        "urgency": "Urgencia",
        "headline": "Titular",
        "headline_hint": "Máximo 150 caracteres; el resto va en el cuerpo.",
        "body": "Cuerpo",
        "next_step": "Próximo paso",
        "publish_at": "Publicar el (vacío para publicar ahora)",
        "in_language": "{label} — español (opcional)",
        "update": "Actualización",
        "language": "Idioma a editar",
        "reason": "Motivo (los miembros lo verán)",
        "correction": "Publicar también una nota de corrección visible",
        "correction_yes": "Sí, avisar a los canales",
        "preview_intro_post": ("Así lo verán los miembros. {reach}"),
        "preview_intro_scheduled": "Así lo verán los miembros, a partir del {when}.",
        "preview_intro_edit": "La actualización después de tu edición. Motivo: {reason}",
        "preview_intro_edit_correction": (
            "La actualización después de tu edición; los canales también recibirán una nota "
            "de corrección. Motivo: {reason}"
        ),
        "preview_intro_retract": "Cada copia de la actualización #{id} se reemplazará por esto.",
        "preview_intro_approve": "Al aprobar se publica la actualización #{id} como se ve aquí.",
        "preview_footer": "Vista previa: todavía no se ha enviado nada.",
        "draft_gone": (
            "Este formulario ya se envió o caducó. Ciérralo y empieza de nuevo con "
            "/strike {command}."
        ),
        "working": "Procesando… la respuesta aparecerá aquí en un momento.",
        "working_modal": "Sigo trabajando. Recibirás un mensaje aquí cuando termine.",
        "nothing_to_pick": "Ahora no hay ninguna actualización para {command}.",
        "open_failed": (
            "Slack no abrió el formulario ({error}). Intenta /strike {command} otra vez."
        ),
        "pick_hint": "#{id} {headline}",
        "headline_required": "Escribe un titular.",
        "reason_required": "Indica un motivo; los miembros lo verán.",
        "past_time": "Elige una hora futura, o déjalo vacío para publicar ahora.",
        "nothing_changed": "Cambia al menos una cosa, o pulsa Cancelar.",
        "state_pending": "pendiente de aprobación",
        "state_scheduled": "programada",
        "state_retracted": "retirada",
        "did_not_fit": "El resto no cabe en Slack",
        "read_full_text": "leer el texto completo",
    },
}


def word(language: str, key: str, /, **values: object) -> str:
    template = _WORDS[i18n.pick(language)].get(key) or _WORDS["en"][key]
    return template.format(**values) if values else template
