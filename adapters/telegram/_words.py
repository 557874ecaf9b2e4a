"""The Telegram plugin's own sentences: command menus and the admin forms' prompts, in every
language the bot speaks. Answers to commands come from `bot.commands`."""

from __future__ import annotations

from bot.ports import i18n

# setMyCommands: one line per command, at most 256 characters. Admin commands are listed
# only in admins' private chats.
MEMBER_COMMANDS = ("status", "demands", "demand", "timeline", "next", "help")
ADMIN_COMMANDS = ("post", "edit", "retract", "approve", "subscribe", "unsubscribe")

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "menu_status": "Where the strike stands, the day, the next step",
        "menu_demands": "What we ask for and what has been offered",
        "menu_demand": "One demand in full, e.g. /demand pay",
        "menu_timeline": "The latest updates, e.g. /timeline 5",
        "menu_next": "What happens next, and when",
        "menu_help": "What I can answer",
        "menu_post": "Post an update (a form, then a preview)",
        "menu_edit": "Edit or correct an update",
        "menu_retract": "Retract an update",
        "menu_approve": "Approve an update another admin wrote",
        "menu_subscribe": "Send updates to this group or channel",
        "menu_unsubscribe": "Stop updates here",
        "private_only": "Admin forms work in a private chat with me, so the group does not "
        "see drafts: open {link} and send {command} there.",
        "pick_status": "New update. Which status does it announce?",
        "ask_headline": "Send the headline: what members must know, in one line "
        "(at most {max} characters).",
        "ask_body": "Send the details members will read, or /skip.",
        "ask_next_step": "Send the next step (e.g. Picket at your school at 6:30), or /skip.",
        "pick_urgency": "How urgent is it? Urgent breaks quiet hours; routine waits for morning.",
        "pick_update_edit": "Which update do you want to edit?",
        "pick_update_retract": "Which update do you want to retract?",
        "pick_update_approve": "Which update do you approve?",
        "nothing_to_pick": "There is no update to {action} right now.",
        "ask_new_headline": "Update #{id}. Send the new headline, or /skip to keep:\n{current}",
        "ask_new_body": "Send the new details, or /skip to keep them.",
        "ask_reason_edit": "Why are you changing it? Members see the reason.",
        "ask_reason_retract": "Why is it retracted? Members see the reason.",
        "too_long": "That is {length} characters; keep it to {max}. Send it again.",
        "empty": "That was empty. Send some text, or /cancel.",
        "preview_post": "Preview: nothing has been sent yet. This goes to {count} subscribed "
        "channel(s).",
        "preview_edit": "Preview of update #{id} as members will see it. Reason: {reason}",
        "preview_retract": "Preview: update #{id} will show as retracted everywhere it went.",
        "preview_approve": "Preview of update #{id}: approving publishes it.",
        "button_post": "Post",
        "button_save": "Save",
        "button_correct": "Save as a correction",
        "button_retract": "Retract",
        "button_approve": "Approve",
        "button_cancel": "Cancel",
        "cancelled": "Cancelled: nothing was changed.",
        "expired": "This form has expired or was already used. Start again with {command}.",
        "not_yours": "Only the admin who filled in this form can use its buttons.",
        "no_form": "Nothing to answer: start with /post, /edit, /retract or /approve.",
        "working": "Working on it…",
        "subscribe_where": "Send /subscribe in the group (or channel) that should receive "
        "updates, or here as /subscribe @channel_name.",
        "bot_not_admin": "I am not an administrator of {chat}, so I cannot post there. Make "
        "me an administrator with permission to post messages, then try again.",
        "chat_unknown": "I cannot find {chat}. Add me to it first (as an administrator of a "
        "channel), then try again.",
    },
    "es": {
        "menu_status": "Cómo va la huelga, qué día es, el próximo paso",
        "menu_demands": "Lo que pedimos y lo que nos han ofrecido",
        "menu_demand": "Una demanda completa, p. ej. /demanda pay",
        "menu_timeline": "Las últimas actualizaciones, p. ej. /cronologia 5",
        "menu_next": "Qué sigue y cuándo",
        "menu_help": "Lo que puedo responder",
        "menu_post": "Publicar una actualización (un formulario y una vista previa)",
        "menu_edit": "Editar o corregir una actualización",
        "menu_retract": "Retirar una actualización",
        "menu_approve": "Aprobar una actualización de otra persona",
        "menu_subscribe": "Enviar actualizaciones a este grupo o canal",
        "menu_unsubscribe": "Dejar de enviar actualizaciones aquí",
        "private_only": "Los formularios de administración funcionan en un chat privado "
        "conmigo, para que el grupo no vea borradores: abre {link} y envía {command} allí.",
        "pick_status": "Nueva actualización. ¿Qué estado anuncia?",
        "ask_headline": "Envía el titular: lo que hay que saber, en una línea (como máximo "
        "{max} caracteres).",
        "ask_body": "Envía los detalles que leerán, o /skip.",
        "ask_next_step": "Envía el próximo paso (p. ej. Piquete en tu escuela a las 6:30), "
        "o /skip.",
        "pick_urgency": "¿Qué tan urgente es? Urgente ignora las horas de silencio; rutina "
        "espera a la mañana.",
        "pick_update_edit": "¿Qué actualización quieres editar?",
        "pick_update_retract": "¿Qué actualización quieres retirar?",
        "pick_update_approve": "¿Qué actualización apruebas?",
        "nothing_to_pick": "No hay ninguna actualización para {action} ahora.",
        "ask_new_headline": "Actualización #{id}. Envía el nuevo titular, o /skip para "
        "mantenerlo:\n{current}",
        "ask_new_body": "Envía los nuevos detalles, o /skip para mantenerlos.",
        "ask_reason_edit": "¿Por qué la cambias? Se mostrará el motivo.",
        "ask_reason_retract": "¿Por qué se retira? Se mostrará el motivo.",
        "too_long": "Son {length} caracteres; el máximo es {max}. Envíalo de nuevo.",
        "empty": "Estaba vacío. Envía un texto, o /cancel.",
        "preview_post": "Vista previa: todavía no se envió nada. Irá a {count} canal(es) "
        "suscrito(s).",
        "preview_edit": "Vista previa de la actualización #{id} tal como se verá. Motivo: {reason}",
        "preview_retract": "Vista previa: la actualización #{id} aparecerá como retirada en "
        "todas partes.",
        "preview_approve": "Vista previa de la actualización #{id}: al aprobarla se publica.",
        "button_post": "Publicar",
        "button_save": "Guardar",
        "button_correct": "Guardar como corrección",
        "button_retract": "Retirar",
        "button_approve": "Aprobar",
        "button_cancel": "Cancelar",
        "cancelled": "Cancelado: no se cambió nada.",
        "expired": "Este formulario caducó o ya se usó. Empieza de nuevo con {command}.",
        "not_yours": "Solo quien llenó este formulario puede usar sus botones.",
        "no_form": "Nada que responder: empieza con /publicar, /editar, /retirar o /aprobar.",
        "working": "Un momento…",
        "subscribe_where": "Envía /suscribir en el grupo (o canal) que debe recibir las "
        "actualizaciones, o aquí como /suscribir @nombre_del_canal.",
        "bot_not_admin": "No soy administrador de {chat}, así que no puedo publicar allí. "
        "Hazme administrador con permiso para publicar y vuelve a intentarlo.",
        "chat_unknown": "No encuentro {chat}. Agrégame primero (como administrador de un "
        "canal) y vuelve a intentarlo.",
    },
}


def word(language: str, key: str, /, **values: object) -> str:
    table = WORDS.get(i18n.pick(language), WORDS["en"])
    return (table.get(key) or WORDS["en"][key]).format(**values)
