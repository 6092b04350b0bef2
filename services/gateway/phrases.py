"""What the gateway tells a person when it cannot take what their device sent, in the language
they write in (`violet.language`): English, Portuguese, Spanish, French and German.

Only the refusals a person can meet are here (a message too long, too many at once, Violet busy
or away, a memory or a document that is gone), and the answer to deleting everything. Frames
only a broken app sends (not JSON, an unknown type, a nested object) are answered in English,
for its developer.
"""

from __future__ import annotations

from collections.abc import Mapping

Phrase = Mapping[str, str]

TOO_LONG: Phrase = {
    "en": "That message is too long: at most 8,000 characters.",
    "pt": "Essa mensagem é longa demais: no máximo 8.000 caracteres.",
    "es": "Ese mensaje es demasiado largo: como máximo 8.000 caracteres.",
    "fr": "Ce message est trop long : 8 000 caractères au maximum.",
    "de": "Diese Nachricht ist zu lang: höchstens 8.000 Zeichen.",
}
TOO_MANY: Phrase = {
    "en": "That's a lot of messages at once. Please wait a few seconds and send it again.",
    "pt": "São muitas mensagens de uma vez. Espere alguns segundos e envie de novo.",
    "es": "Son muchos mensajes a la vez. Espera unos segundos y vuelve a enviarlo.",
    "fr": "Cela fait beaucoup de messages d'un coup. Attendez quelques secondes et renvoyez-le.",
    "de": "Das sind viele Nachrichten auf einmal. Warten Sie bitte ein paar Sekunden und "
    "senden Sie sie noch einmal.",
}
AWAY: Phrase = {
    "en": "Violet can't take messages right now. Please try again in a moment.",
    "pt": "A Violet não pode receber mensagens agora. Tente de novo daqui a pouco.",
    "es": "Violet no puede recibir mensajes ahora mismo. Inténtalo de nuevo en un momento.",
    "fr": "Violet ne peut pas recevoir de messages pour le moment. Réessayez dans un instant.",
    "de": "Violet kann gerade keine Nachrichten annehmen. Versuchen Sie es bitte gleich noch "
    "einmal.",
}
SIGNED_OUT: Phrase = {
    "en": "This account was deleted, so this device is signed out.",
    "pt": "Esta conta foi apagada, por isso este aparelho saiu da sessão.",
    "es": "Esta cuenta se ha eliminado, así que este dispositivo ha cerrado la sesión.",
    "fr": "Ce compte a été supprimé : cet appareil est donc déconnecté.",
    "de": "Dieses Konto wurde gelöscht, deshalb ist dieses Gerät abgemeldet.",
}
DEVICE_SIGNED_OUT: Phrase = {
    "en": "You were signed out of this device. Sign in again to go on.",
    "pt": "Você saiu da sessão neste aparelho. Entre de novo para continuar.",
    "es": "Se cerró tu sesión en este dispositivo. Vuelve a iniciar sesión para seguir.",
    "fr": "Vous avez été déconnecté de cet appareil. Reconnectez-vous pour continuer.",
    "de": "Sie wurden auf diesem Gerät abgemeldet. Melden Sie sich wieder an, um weiterzumachen.",
}
BUSY: Phrase = {
    "en": "Violet has too much to answer right now. Please send that again in a moment.",
    "pt": "A Violet tem muito para responder agora. Envie isso de novo daqui a pouco.",
    "es": "Violet tiene demasiado que responder ahora mismo. Vuelve a enviarlo en un momento.",
    "fr": "Violet a trop de messages à traiter en ce moment. Renvoyez-le dans un instant.",
    "de": "Violet hat gerade zu viel zu beantworten. Senden Sie das bitte gleich noch einmal.",
}
NOT_TAKEN: Phrase = {
    "en": "Violet couldn't take that message.",
    "pt": "A Violet não conseguiu receber essa mensagem.",
    "es": "Violet no pudo recibir ese mensaje.",
    "fr": "Violet n'a pas pu recevoir ce message.",
    "de": "Violet konnte diese Nachricht nicht annehmen.",
}
NO_SUCH_MEMORY: Phrase = {
    "en": "There is no such memory to change.",
    "pt": "Essa lembrança não existe, então não dá para mudá-la.",
    "es": "Ese recuerdo no existe, así que no se puede cambiar.",
    "fr": "Ce souvenir n'existe pas : il ne peut pas être modifié.",
    "de": "Diese Erinnerung gibt es nicht, sie kann nicht geändert werden.",
}
PAGE_AWAY: Phrase = {
    "en": "Your memories can't be shown right now. Please try again in a moment.",
    "pt": "Suas lembranças não podem ser mostradas agora. Tente de novo daqui a pouco.",
    "es": "Tus recuerdos no se pueden mostrar ahora mismo. Inténtalo de nuevo en un momento.",
    "fr": "Vos souvenirs ne peuvent pas être affichés pour le moment. Réessayez dans un instant.",
    "de": "Ihre Erinnerungen können gerade nicht angezeigt werden. Versuchen Sie es bitte "
    "gleich noch einmal.",
}
NO_SUCH_DOCUMENT: Phrase = {
    "en": "There is no document by that name. It may have been deleted.",
    "pt": "Não há nenhum documento com esse nome. Talvez tenha sido apagado.",
    "es": "No hay ningún documento con ese nombre. Quizá se haya borrado.",
    "fr": "Il n'y a aucun document de ce nom. Il a peut-être été supprimé.",
    "de": "Es gibt kein Dokument mit diesem Namen. Vielleicht wurde es gelöscht.",
}
DOCUMENT_IN_THE_WAY: Phrase = {
    "en": "A newer document has that name now, so the deleted one can't come back.",
    "pt": "Um documento mais novo tem esse nome agora, então o apagado não pode voltar.",
    "es": "Ahora hay un documento más nuevo con ese nombre, así que el borrado no puede volver.",
    "fr": "Un document plus récent porte ce nom, donc celui supprimé ne peut pas revenir.",
    "de": "Ein neueres Dokument trägt jetzt diesen Namen, daher kann das gelöschte nicht "
    "zurückkommen.",
}
DOCUMENTS_AWAY: Phrase = {
    "en": "Your documents can't be shown right now. Please try again in a moment.",
    "pt": "Seus documentos não podem ser mostrados agora. Tente de novo daqui a pouco.",
    "es": "Tus documentos no se pueden mostrar ahora mismo. Inténtalo de nuevo en un momento.",
    "fr": "Vos documents ne peuvent pas être affichés pour le moment. Réessayez dans un instant.",
    "de": "Ihre Dokumente können gerade nicht angezeigt werden. Versuchen Sie es bitte gleich "
    "noch einmal.",
}
NOT_A_KEY: Phrase = {
    "en": "That doesn't look like a key: it is one word, no spaces.",
    "pt": "Isso não parece uma chave: é uma só palavra, sem espaços.",
    "es": "Eso no parece una clave: es una sola palabra, sin espacios.",
    "fr": "Cela ne ressemble pas à une clé : c'est un seul mot, sans espaces.",
    "de": "Das sieht nicht wie ein Schlüssel aus: ein Wort, ohne Leerzeichen.",
}
NO_SUCH_DEVICE: Phrase = {
    "en": "That device isn't signed in any more.",
    "pt": "Esse aparelho já não tem sessão iniciada.",
    "es": "Ese dispositivo ya no tiene la sesión iniciada.",
    "fr": "Cet appareil n'est plus connecté.",
    "de": "Dieses Gerät ist nicht mehr angemeldet.",
}
NO_SUCH_REMINDER: Phrase = {
    "en": "That reminder isn't there any more.",
    "pt": "Esse lembrete já não existe.",
    "es": "Ese recordatorio ya no existe.",
    "fr": "Ce rappel n'existe plus.",
    "de": "Diese Erinnerung gibt es nicht mehr.",
}
REMINDERS_AWAY: Phrase = {
    "en": "Your reminders can't be shown right now. Please try again in a moment.",
    "pt": "Não é possível mostrar os seus lembretes agora. Tente de novo daqui a pouco.",
    "es": "Ahora no se pueden mostrar tus recordatorios. Vuelve a intentarlo en un momento.",
    "fr": "Vos rappels ne peuvent pas être affichés pour l'instant. Réessayez dans un instant.",
    "de": "Ihre Erinnerungen können gerade nicht angezeigt werden. Bitte versuchen Sie es gleich "
    "noch einmal.",
}
DEVICES_AWAY: Phrase = {
    "en": "Your devices can't be shown right now. Please try again in a moment.",
    "pt": "Não é possível mostrar os seus aparelhos agora. Tente de novo daqui a pouco.",
    "es": "Ahora no se pueden mostrar tus dispositivos. Vuelve a intentarlo en un momento.",
    "fr": "Vos appareils ne peuvent pas être affichés pour l'instant. Réessayez dans un instant.",
    "de": "Ihre Geräte können gerade nicht angezeigt werden. Bitte versuchen Sie es gleich noch "
    "einmal.",
}
KEY_SETS_TOO_MANY: Phrase = {
    "en": "You've tried several keys in the last hour. Please wait a while and try again.",
    "pt": "Você tentou várias chaves na última hora. Espere um pouco e tente de novo.",
    "es": "Has probado varias claves en la última hora. Espera un rato y vuelve a intentarlo.",
    "fr": "Vous avez essayé plusieurs clés cette dernière heure. Attendez un peu et réessayez.",
    "de": "Sie haben in der letzten Stunde mehrere Schlüssel versucht. Bitte warten Sie etwas "
    "und versuchen Sie es dann noch einmal.",
}
ACCOUNT_AWAY: Phrase = {
    "en": "Your key page can't be shown right now. Please try again in a moment.",
    "pt": "A sua página da chave não pode ser mostrada agora. Tente de novo daqui a pouco.",
    "es": "Tu página de la clave no se puede mostrar ahora. Inténtalo de nuevo en un momento.",
    "fr": "Votre page de clé ne peut pas être affichée. Réessayez dans un instant.",
    "de": "Ihre Schlüsselseite kann gerade nicht angezeigt werden. Bitte gleich noch einmal.",
}
DELETED: Phrase = {
    "en": "Everything of yours was deleted from Violet, and every device of yours is signed out. "
    "If you come back, you start a new, empty conversation.",
    "pt": "Tudo o que era seu foi apagado da Violet, e todos os seus aparelhos saíram da sessão. "
    "Se voltar, começa uma conversa nova e vazia.",
    "es": "Todo lo tuyo se ha eliminado de Violet, y todos tus dispositivos han cerrado la sesión. "
    "Si vuelves, empezarás una conversación nueva y vacía.",
    "fr": "Tout ce qui vous concerne a été supprimé de Violet, et tous vos appareils sont "
    "déconnectés. Si vous revenez, une nouvelle conversation vide commencera.",
    "de": "Alles von Ihnen wurde aus Violet gelöscht, und alle Ihre Geräte sind abgemeldet. Wenn "
    "Sie wiederkommen, beginnt ein neues, leeres Gespräch.",
}
# The confirmation words stay in English in every language: they are what Violet checks.
NOTHING_DELETED: Phrase = {
    "en": 'Nothing was deleted. To delete everything, type "delete everything".',
    "pt": 'Nada foi apagado. Para apagar tudo, escreva "delete everything".',
    "es": 'No se ha eliminado nada. Para eliminarlo todo, escribe "delete everything".',
    "fr": "Rien n'a été supprimé. Pour tout supprimer, tapez « delete everything ».",
    "de": "Es wurde nichts gelöscht. Um alles zu löschen, tippen Sie „delete everything“.",
}
DELETE_AWAY: Phrase = {
    "en": "Violet couldn't finish deleting everything just now. Please try again in a few minutes.",
    "pt": "A Violet não conseguiu terminar de apagar tudo agora. Tente de novo daqui a alguns "
    "minutos.",
    "es": "Violet no ha podido terminar de eliminarlo todo ahora. Inténtalo de nuevo en unos "
    "minutos.",
    "fr": "Violet n'a pas pu finir de tout supprimer pour le moment. Réessayez dans quelques "
    "minutes.",
    "de": "Violet konnte gerade nicht alles fertig löschen. Versuchen Sie es bitte in ein paar "
    "Minuten noch einmal.",
}
NO_NOTIFICATIONS_HERE: Phrase = {
    "en": "Violet can't send notifications to this browser. Nothing was changed.",
    "pt": "A Violet não consegue enviar notificações para este navegador. Nada foi mudado.",
    "es": "Violet no puede enviar avisos a este navegador. No se ha cambiado nada.",
    "fr": "Violet ne peut pas envoyer de notifications à ce navigateur. Rien n'a été changé.",
    "de": "Violet kann diesem Browser keine Mitteilungen schicken. Es wurde nichts geändert.",
}
NOTIFICATIONS_AWAY: Phrase = {
    "en": "Notifications can't be changed right now. Please try again in a moment.",
    "pt": "As notificações não podem ser mudadas agora. Tente de novo daqui a pouco.",
    "es": "Los avisos no se pueden cambiar ahora mismo. Inténtalo de nuevo en un momento.",
    "fr": "Les notifications ne peuvent pas être modifiées pour le moment. Réessayez dans un "
    "instant.",
    "de": "Die Mitteilungen lassen sich gerade nicht ändern. Versuchen Sie es bitte gleich noch "
    "einmal.",
}
