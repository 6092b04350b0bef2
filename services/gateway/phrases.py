"""What the gateway tells a person when it cannot take what their device sent, in the language
they write in (`violet.language`): the seventeen of `violet.language.LANGUAGES`.
They address the person as `violet.language` says.

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
    "it": "Questo messaggio è troppo lungo: al massimo 8.000 caratteri.",
    "nl": "Dit bericht is te lang: maximaal 8.000 tekens.",
    "pl": "Ta wiadomość jest za długa: najwyżej 8000 znaków.",
    "tr": "Bu mesaj çok uzun: en fazla 8.000 karakter olabilir.",
    "id": "Pesan itu terlalu panjang: paling banyak 8.000 karakter.",
    "vi": "Tin nhắn này dài quá: tối đa 8.000 ký tự.",
    "ru": "Это сообщение слишком длинное: не больше 8000 символов.",
    "ar": "هذه الرسالة طويلة جدًا: الحد الأقصى 8000 حرف.",
    "hi": "यह संदेश बहुत लंबा है: ज़्यादा से ज़्यादा 8,000 अक्षर।",
    "zh": "这条消息太长了：最多 8000 个字符。",
    "ja": "メッセージが長すぎます。8,000文字までにしてください。",
    "ko": "메시지가 너무 길어요. 최대 8,000자까지 보낼 수 있어요.",
}
TOO_MANY: Phrase = {
    "en": "That's a lot of messages at once. Please wait a few seconds and send it again.",
    "pt": "São muitas mensagens de uma vez. Espere alguns segundos e envie de novo.",
    "es": "Son muchos mensajes a la vez. Espera unos segundos y vuelve a enviarlo.",
    "fr": "Cela fait beaucoup de messages d'un coup. Attendez quelques secondes et renvoyez-le.",
    "de": "Das sind viele Nachrichten auf einmal. Warten Sie bitte ein paar Sekunden und "
    "senden Sie sie noch einmal.",
    "it": "Sono tanti messaggi tutti insieme. Aspetta qualche secondo e invialo di nuovo.",
    "nl": "Dat zijn veel berichten tegelijk. Wacht een paar seconden en stuur het opnieuw.",
    "pl": "To dużo wiadomości naraz. Poczekaj kilka sekund i wyślij ją jeszcze raz.",
    "tr": "Aynı anda çok fazla mesaj geldi. Lütfen birkaç saniye bekleyip tekrar gönderin.",
    "id": "Terlalu banyak pesan sekaligus. Silakan tunggu beberapa detik, lalu kirim lagi.",
    "vi": "Nhiều tin nhắn cùng lúc quá. Bạn chờ vài giây rồi gửi lại nhé.",
    "ru": "Слишком много сообщений сразу. Подождите несколько секунд и отправьте ещё раз.",
    "ar": "وصلت رسائل كثيرة دفعة واحدة. يُرجى الانتظار بضع ثوانٍ ثم إرسالها مرة أخرى.",
    "hi": "एक साथ बहुत सारे संदेश आ गए हैं। कृपया कुछ सेकंड रुककर इसे फिर से भेजें।",
    "zh": "一下子发来的消息太多了。请等几秒钟再发一次。",
    "ja": "一度にたくさんのメッセージが届いています。数秒待ってから、もう一度送ってください。",
    "ko": "한꺼번에 메시지가 너무 많아요. 몇 초 기다렸다가 다시 보내 주세요.",
}
AWAY: Phrase = {
    "en": "Violet can't take messages right now. Please try again in a moment.",
    "pt": "A Violet não pode receber mensagens agora. Tente de novo daqui a pouco.",
    "es": "Violet no puede recibir mensajes ahora mismo. Inténtalo de nuevo en un momento.",
    "fr": "Violet ne peut pas recevoir de messages pour le moment. Réessayez dans un instant.",
    "de": "Violet kann gerade keine Nachrichten annehmen. Versuchen Sie es bitte gleich noch "
    "einmal.",
    "it": "Violet non può ricevere messaggi in questo momento. Riprova tra poco.",
    "nl": "Violet kan nu even geen berichten ontvangen. Probeer het zo nog eens.",
    "pl": "Violet nie może teraz odbierać wiadomości. Spróbuj ponownie za chwilę.",
    "tr": "Violet şu anda mesaj alamıyor. Lütfen biraz sonra tekrar deneyin.",
    "id": "Violet belum bisa menerima pesan saat ini. Silakan coba lagi dalam beberapa saat.",
    "vi": "Lúc này Violet chưa thể nhận tin nhắn. Bạn thử lại sau một lát nhé.",
    "ru": "Violet сейчас не может принимать сообщения. Попробуйте ещё раз чуть позже.",
    "ar": "لا تستطيع Violet استقبال الرسائل الآن. يُرجى المحاولة مرة أخرى بعد قليل.",
    "hi": "Violet अभी संदेश नहीं ले पा रही है। कृपया थोड़ी देर में फिर से कोशिश करें।",
    "zh": "Violet 现在收不了消息。请稍后再试。",
    "ja": "Violetは今メッセージを受け取れません。少し待ってから、もう一度お試しください。",
    "ko": "Violet이 지금은 메시지를 받을 수 없어요. 잠시 후에 다시 시도해 주세요.",
}
SIGNED_OUT: Phrase = {
    "en": "This account was deleted, so this device is signed out.",
    "pt": "Esta conta foi apagada, por isso este aparelho saiu da sessão.",
    "es": "Esta cuenta se ha eliminado, así que este dispositivo ha cerrado la sesión.",
    "fr": "Ce compte a été supprimé : cet appareil est donc déconnecté.",
    "de": "Dieses Konto wurde gelöscht, deshalb ist dieses Gerät abgemeldet.",
    "it": "Questo account è stato eliminato, quindi la sessione su questo dispositivo è chiusa.",
    "nl": "Dit account is verwijderd, dus je bent op dit apparaat uitgelogd.",
    "pl": "To konto zostało usunięte, więc to urządzenie zostało wylogowane.",
    "tr": "Bu hesap silindi, bu yüzden bu cihazda oturum kapatıldı.",
    "id": "Akun ini sudah dihapus, jadi perangkat ini sudah keluar.",
    "vi": "Tài khoản này đã bị xóa nên thiết bị này đã được đăng xuất.",
    "ru": "Этот аккаунт удалён, поэтому на этом устройстве выполнен выход.",
    "ar": "حُذف هذا الحساب، لذلك سُجّل الخروج من هذا الجهاز.",
    "hi": "यह खाता हटा दिया गया है, इसलिए इस डिवाइस से साइन आउट कर दिया गया है।",
    "zh": "这个账户已被删除，所以这台设备已退出登录。",
    "ja": "このアカウントは削除されたため、この端末からログアウトしました。",
    "ko": "이 계정이 삭제되어 이 기기에서 로그아웃되었어요.",
}
DEVICE_SIGNED_OUT: Phrase = {
    "en": "You were signed out of this device. Sign in again to go on.",
    "pt": "Você saiu da sessão neste aparelho. Entre de novo para continuar.",
    "es": "Se cerró tu sesión en este dispositivo. Vuelve a iniciar sesión para seguir.",
    "fr": "Vous avez été déconnecté de cet appareil. Reconnectez-vous pour continuer.",
    "de": "Sie wurden auf diesem Gerät abgemeldet. Melden Sie sich wieder an, um weiterzumachen.",
    "it": "La sessione su questo dispositivo è stata chiusa. Accedi di nuovo per continuare.",
    "nl": "Je bent op dit apparaat uitgelogd. Log opnieuw in om verder te gaan.",
    "pl": "Wylogowano cię z tego urządzenia. Zaloguj się ponownie, żeby kontynuować.",
    "tr": "Bu cihazda oturumunuz kapatıldı. Devam etmek için tekrar giriş yapın.",
    "id": "Anda sudah keluar dari perangkat ini. Masuk lagi untuk melanjutkan.",
    "vi": "Bạn đã bị đăng xuất khỏi thiết bị này. Hãy đăng nhập lại để tiếp tục nhé.",
    "ru": "На этом устройстве выполнен выход из аккаунта. Войдите снова, чтобы продолжить.",
    "ar": "سُجّل خروجك من هذا الجهاز. يُرجى تسجيل الدخول مرة أخرى للمتابعة.",
    "hi": "इस डिवाइस से आपको साइन आउट कर दिया गया है। आगे बढ़ने के लिए फिर से साइन इन करें।",
    "zh": "你已在这台设备上退出登录。请重新登录后继续。",
    "ja": "この端末からログアウトされました。続けるには、もう一度ログインしてください。",
    "ko": "이 기기에서 로그아웃되었어요. 계속하려면 다시 로그인해 주세요.",
}
BUSY: Phrase = {
    "en": "Violet has too much to answer right now. Please send that again in a moment.",
    "pt": "A Violet tem muito para responder agora. Envie isso de novo daqui a pouco.",
    "es": "Violet tiene demasiado que responder ahora mismo. Vuelve a enviarlo en un momento.",
    "fr": "Violet a trop de messages à traiter en ce moment. Renvoyez-le dans un instant.",
    "de": "Violet hat gerade zu viel zu beantworten. Senden Sie das bitte gleich noch einmal.",
    "it": "Violet ha troppe cose a cui rispondere in questo momento. Rimandalo tra poco.",
    "nl": "Violet heeft nu te veel om te beantwoorden. Stuur het zo nog een keer.",
    "pl": "Violet ma teraz za dużo wiadomości, by na wszystkie odpowiedzieć. Wyślij to jeszcze "
    "raz za chwilę.",
    "tr": "Violet'in şu anda yanıtlaması gereken çok şey var. Lütfen biraz sonra tekrar gönderin.",
    "id": "Pesan yang harus dijawab Violet sedang terlalu banyak. Silakan kirim lagi dalam "
    "beberapa saat.",
    "vi": "Lúc này Violet có quá nhiều tin cần trả lời. Bạn gửi lại sau một lát nhé.",
    "ru": "Violet сейчас не успевает ответить на всё. Отправьте это ещё раз чуть позже.",
    "ar": "لدى Violet الكثير لتجيب عنه الآن. يُرجى إرسال ذلك مرة أخرى بعد قليل.",
    "hi": "Violet के पास अभी जवाब देने को बहुत कुछ है। कृपया इसे थोड़ी देर में फिर से भेजें।",
    "zh": "Violet 现在要回复的消息太多了。请稍后再发一次。",
    "ja": "Violetは今、返事が追いついていません。少ししてから、もう一度送ってください。",
    "ko": "Violet이 지금 답할 게 너무 많아요. 잠시 후에 다시 보내 주세요.",
}
NOT_TAKEN: Phrase = {
    "en": "Violet couldn't take that message.",
    "pt": "A Violet não conseguiu receber essa mensagem.",
    "es": "Violet no pudo recibir ese mensaje.",
    "fr": "Violet n'a pas pu recevoir ce message.",
    "de": "Violet konnte diese Nachricht nicht annehmen.",
    "it": "Violet non è riuscita a ricevere questo messaggio.",
    "nl": "Violet kon dit bericht niet ontvangen.",
    "pl": "Violet nie mogła odebrać tej wiadomości.",
    "tr": "Violet bu mesajı alamadı.",
    "id": "Violet tidak bisa menerima pesan itu.",
    "vi": "Violet không nhận được tin nhắn đó.",
    "ru": "Violet не смогла принять это сообщение.",
    "ar": "لم تتمكن Violet من استقبال هذه الرسالة.",
    "hi": "Violet यह संदेश नहीं ले सकी।",
    "zh": "Violet 没能收到这条消息。",
    "ja": "Violetはこのメッセージを受け取れませんでした。",
    "ko": "Violet이 이 메시지를 받지 못했어요.",
}
NO_SUCH_MEMORY: Phrase = {
    "en": "There is no such memory to change.",
    "pt": "Essa lembrança não existe, então não dá para mudá-la.",
    "es": "Ese recuerdo no existe, así que no se puede cambiar.",
    "fr": "Ce souvenir n'existe pas : il ne peut pas être modifié.",
    "de": "Diese Erinnerung gibt es nicht, sie kann nicht geändert werden.",
    "it": "Questo ricordo non esiste, quindi non si può modificare.",
    "nl": "Dit heeft Violet niet onthouden, dus er valt niets aan te passen.",
    "pl": "Takie wspomnienie nie istnieje, więc nie da się go zmienić.",
    "tr": "Böyle bir anı yok, bu yüzden değiştirilemiyor.",
    "id": "Ingatan itu tidak ada, jadi tidak bisa diubah.",
    "vi": "Không có ký ức nào như vậy để sửa.",
    "ru": "Такого воспоминания нет, поэтому его нельзя изменить.",
    "ar": "هذه الذكرى غير موجودة، فلا يمكن تغييرها.",
    "hi": "ऐसी कोई याद नहीं है, इसलिए इसे बदला नहीं जा सकता।",
    "zh": "没有这条记忆，所以无法修改。",
    "ja": "その記憶は見つからないため、変更できません。",
    "ko": "그런 기억이 없어서 바꿀 수 없어요.",
}
PAGE_AWAY: Phrase = {
    "en": "Your memories can't be shown right now. Please try again in a moment.",
    "pt": "Suas lembranças não podem ser mostradas agora. Tente de novo daqui a pouco.",
    "es": "Tus recuerdos no se pueden mostrar ahora mismo. Inténtalo de nuevo en un momento.",
    "fr": "Vos souvenirs ne peuvent pas être affichés pour le moment. Réessayez dans un instant.",
    "de": "Ihre Erinnerungen können gerade nicht angezeigt werden. Versuchen Sie es bitte "
    "gleich noch einmal.",
    "it": "I tuoi ricordi non si possono mostrare in questo momento. Riprova tra poco.",
    "nl": "Wat Violet over je onthoudt, kan nu niet worden getoond. Probeer het zo nog eens.",
    "pl": "Nie można teraz pokazać twoich wspomnień. Spróbuj ponownie za chwilę.",
    "tr": "Anılarınız şu anda gösterilemiyor. Lütfen biraz sonra tekrar deneyin.",
    "id": "Ingatan Anda belum bisa ditampilkan saat ini. Silakan coba lagi dalam beberapa saat.",
    "vi": "Hiện chưa thể hiển thị ký ức của bạn. Bạn thử lại sau một lát nhé.",
    "ru": "Сейчас не получается показать ваши воспоминания. Попробуйте ещё раз чуть позже.",
    "ar": "لا يمكن عرض ذكرياتك الآن. يُرجى المحاولة مرة أخرى بعد قليل.",
    "hi": "आपकी यादें अभी नहीं दिखाई जा सकतीं। कृपया थोड़ी देर में फिर से कोशिश करें।",
    "zh": "现在无法显示你的记忆。请稍后再试。",
    "ja": "今は記憶を表示できません。少し待ってから、もう一度お試しください。",
    "ko": "지금은 기억을 보여 드릴 수 없어요. 잠시 후에 다시 시도해 주세요.",
}
NO_SUCH_DOCUMENT: Phrase = {
    "en": "There is no document by that name. It may have been deleted.",
    "pt": "Não há nenhum documento com esse nome. Talvez tenha sido apagado.",
    "es": "No hay ningún documento con ese nombre. Quizá se haya borrado.",
    "fr": "Il n'y a aucun document de ce nom. Il a peut-être été supprimé.",
    "de": "Es gibt kein Dokument mit diesem Namen. Vielleicht wurde es gelöscht.",
    "it": "Non c'è nessun documento con questo nome. Forse è stato eliminato.",
    "nl": "Er is geen document met die naam. Misschien is het verwijderd.",
    "pl": "Nie ma dokumentu o tej nazwie. Możliwe, że został usunięty.",
    "tr": "Bu adda bir belge yok. Silinmiş olabilir.",
    "id": "Tidak ada dokumen dengan nama itu. Mungkin sudah dihapus.",
    "vi": "Không có tài liệu nào tên như vậy. Có thể nó đã bị xóa.",
    "ru": "Документа с таким названием нет. Возможно, его удалили.",
    "ar": "لا يوجد مستند بهذا الاسم. ربما حُذف.",
    "hi": "इस नाम का कोई दस्तावेज़ नहीं है। हो सकता है कि उसे हटा दिया गया हो।",
    "zh": "没有叫这个名字的文档。它可能已被删除。",
    "ja": "その名前の文書はありません。削除された可能性があります。",
    "ko": "그런 이름의 문서가 없어요. 삭제되었을 수도 있어요.",
}
DOCUMENT_IN_THE_WAY: Phrase = {
    "en": "A newer document has that name now, so the deleted one can't come back.",
    "pt": "Um documento mais novo tem esse nome agora, então o apagado não pode voltar.",
    "es": "Ahora hay un documento más nuevo con ese nombre, así que el borrado no puede volver.",
    "fr": "Un document plus récent porte ce nom, donc celui supprimé ne peut pas revenir.",
    "de": "Ein neueres Dokument trägt jetzt diesen Namen, daher kann das gelöschte nicht "
    "zurückkommen.",
    "it": "Ora un documento più recente ha questo nome, quindi quello eliminato non può tornare.",
    "nl": "Een nieuwer document heeft nu die naam, dus het verwijderde kan niet terugkomen.",
    "pl": "Nowszy dokument ma teraz tę nazwę, więc usunięty nie może wrócić.",
    "tr": "Artık bu adı daha yeni bir belge taşıyor, bu yüzden silinen belge geri gelemez.",
    "id": "Sekarang ada dokumen yang lebih baru dengan nama itu, jadi dokumen yang dihapus tidak "
    "bisa kembali.",
    "vi": "Giờ đã có một tài liệu mới hơn mang tên đó, nên tài liệu đã xóa không thể quay lại.",
    "ru": "Теперь это название у более нового документа, поэтому удалённый вернуть нельзя.",
    "ar": "يحمل مستند أحدث هذا الاسم الآن، لذلك لا يمكن استعادة المستند المحذوف.",
    "hi": "अब इसी नाम का एक नया दस्तावेज़ है, इसलिए हटाया गया दस्तावेज़ वापस नहीं आ सकता।",
    "zh": "现在有一个更新的文档用了这个名字，所以已删除的那个无法恢复。",
    "ja": "今は新しい文書がその名前を使っているため、削除した文書は戻せません。",
    "ko": "지금은 더 새로운 문서가 그 이름을 쓰고 있어서, 삭제된 문서를 되돌릴 수 없어요.",
}
DOCUMENTS_AWAY: Phrase = {
    "en": "Your documents can't be shown right now. Please try again in a moment.",
    "pt": "Seus documentos não podem ser mostrados agora. Tente de novo daqui a pouco.",
    "es": "Tus documentos no se pueden mostrar ahora mismo. Inténtalo de nuevo en un momento.",
    "fr": "Vos documents ne peuvent pas être affichés pour le moment. Réessayez dans un instant.",
    "de": "Ihre Dokumente können gerade nicht angezeigt werden. Versuchen Sie es bitte gleich "
    "noch einmal.",
    "it": "I tuoi documenti non si possono mostrare in questo momento. Riprova tra poco.",
    "nl": "Je documenten kunnen nu niet worden getoond. Probeer het zo nog eens.",
    "pl": "Nie można teraz pokazać twoich dokumentów. Spróbuj ponownie za chwilę.",
    "tr": "Belgeleriniz şu anda gösterilemiyor. Lütfen biraz sonra tekrar deneyin.",
    "id": "Dokumen Anda belum bisa ditampilkan saat ini. Silakan coba lagi dalam beberapa saat.",
    "vi": "Hiện chưa thể hiển thị tài liệu của bạn. Bạn thử lại sau một lát nhé.",
    "ru": "Сейчас не получается показать ваши документы. Попробуйте ещё раз чуть позже.",
    "ar": "لا يمكن عرض مستنداتك الآن. يُرجى المحاولة مرة أخرى بعد قليل.",
    "hi": "आपके दस्तावेज़ अभी नहीं दिखाए जा सकते। कृपया थोड़ी देर में फिर से कोशिश करें।",
    "zh": "现在无法显示你的文档。请稍后再试。",
    "ja": "今は文書を表示できません。少し待ってから、もう一度お試しください。",
    "ko": "지금은 문서를 보여 드릴 수 없어요. 잠시 후에 다시 시도해 주세요.",
}
# Where the operator lets nobody bring a key of their own (VIOLET_PEOPLE_BRING_KEYS=false).
KEYS_NOT_HERE: Phrase = {
    "en": "Here Violet doesn't use keys of people's own: the person who runs Violet pays for her.",
    "pt": "Aqui a Violet não usa chaves próprias: quem administra a Violet paga por ela.",
    "es": "Aquí Violet no usa claves propias: quien gestiona Violet paga por ella.",
    "fr": "Ici, Violet n'utilise pas de clé personnelle : la personne qui gère Violet la paie.",
    "de": "Hier nutzt Violet keine eigenen Schlüssel: Wer Violet betreibt, bezahlt sie.",
    "it": "Qui Violet non usa chiavi personali: paga chi gestisce Violet.",
    "nl": "Hier gebruikt Violet geen eigen sleutels: wie Violet beheert, betaalt ervoor.",
    "pl": "Tutaj Violet nie używa własnych kluczy: płaci za nią osoba, która ją prowadzi.",
    "tr": "Burada Violet kişisel anahtar kullanmıyor: ücretini Violet'i yöneten kişi ödüyor.",
    "id": "Di sini Violet tidak memakai kunci pribadi: biayanya dibayar oleh pengelola Violet.",
    "vi": "Ở đây Violet không dùng khóa riêng: người quản lý Violet trả phí cho cô ấy.",
    "ru": "Здесь Violet не использует личные ключи: за неё платит тот, кто её ведёт.",
    "ar": "لا تستخدم Violet هنا مفاتيح شخصية: يدفع تكلفتها من يدير Violet.",
    "hi": "यहाँ Violet निजी कुंजियाँ इस्तेमाल नहीं करती: उसका ख़र्च Violet चलाने वाले उठाते हैं।",
    "zh": "这里的 Violet 不使用个人密钥：费用由运行 Violet 的人支付。",
    "ja": "ここの Violet は個人のキーを使いません。費用は Violet を運営している人が払います。",
    "ko": "여기서는 Violet이 개인 키를 쓰지 않아요. 비용은 Violet을 운영하는 사람이 내요.",
}
NOT_A_KEY: Phrase = {
    "en": "That doesn't look like a key: it is one word, no spaces.",
    "pt": "Isso não parece uma chave: é uma só palavra, sem espaços.",
    "es": "Eso no parece una clave: es una sola palabra, sin espacios.",
    "fr": "Cela ne ressemble pas à une clé : c'est un seul mot, sans espaces.",
    "de": "Das sieht nicht wie ein Schlüssel aus: ein Wort, ohne Leerzeichen.",
    "it": "Non sembra una chiave: è una sola parola, senza spazi.",
    "nl": "Dat lijkt niet op een sleutel: een sleutel is één woord, zonder spaties.",
    "pl": "To nie wygląda na klucz: klucz to jedno słowo, bez spacji.",
    "tr": "Bu bir anahtara benzemiyor: anahtar boşluksuz, tek bir kelimedir.",
    "id": "Itu sepertinya bukan kunci: kunci berupa satu kata, tanpa spasi.",
    "vi": "Cái này trông không giống khóa: khóa chỉ là một từ liền, không có dấu cách.",
    "ru": "Это не похоже на ключ: ключ — одно слово, без пробелов.",
    "ar": "لا يبدو هذا مفتاحًا: المفتاح كلمة واحدة بلا مسافات.",
    "hi": "यह कुंजी नहीं लगती: कुंजी एक ही शब्द होती है, बिना खाली जगह के।",
    "zh": "这看起来不像密钥：密钥是一整串字符，中间没有空格。",
    "ja": "キーではないようです。キーは空白のない、ひと続きの言葉です。",
    "ko": "키 같지 않아요. 키는 띄어쓰기 없는 한 단어예요.",
}
NO_SUCH_DEVICE: Phrase = {
    "en": "That device isn't signed in any more.",
    "pt": "Esse aparelho já não tem sessão iniciada.",
    "es": "Ese dispositivo ya no tiene la sesión iniciada.",
    "fr": "Cet appareil n'est plus connecté.",
    "de": "Dieses Gerät ist nicht mehr angemeldet.",
    "it": "Quel dispositivo non è più connesso.",
    "nl": "Dat apparaat is niet meer ingelogd.",
    "pl": "To urządzenie nie jest już zalogowane.",
    "tr": "O cihazda artık oturum açık değil.",
    "id": "Perangkat itu sudah keluar.",
    "vi": "Thiết bị đó không còn đăng nhập nữa.",
    "ru": "Это устройство больше не подключено к аккаунту.",
    "ar": "لم يعد هذا الجهاز متصلًا بحسابك.",
    "hi": "वह डिवाइस अब साइन इन नहीं है।",
    "zh": "那台设备已经退出登录了。",
    "ja": "その端末はもうログインしていません。",
    "ko": "그 기기는 이제 로그인되어 있지 않아요.",
}
NO_SUCH_REMINDER: Phrase = {
    "en": "That reminder isn't there any more.",
    "pt": "Esse lembrete já não existe.",
    "es": "Ese recordatorio ya no existe.",
    "fr": "Ce rappel n'existe plus.",
    "de": "Diese Erinnerung gibt es nicht mehr.",
    "it": "Quel promemoria non c'è più.",
    "nl": "Die herinnering bestaat niet meer.",
    "pl": "Tego przypomnienia już nie ma.",
    "tr": "O hatırlatıcı artık yok.",
    "id": "Pengingat itu sudah tidak ada.",
    "vi": "Lời nhắc đó không còn nữa.",
    "ru": "Этого напоминания больше нет.",
    "ar": "لم يعد هذا التذكير موجودًا.",
    "hi": "वह रिमाइंडर अब नहीं है।",
    "zh": "那条提醒已经不在了。",
    "ja": "そのリマインダーはもうありません。",
    "ko": "그 리마인더는 이제 없어요.",
}
REMINDERS_AWAY: Phrase = {
    "en": "Your reminders can't be shown right now. Please try again in a moment.",
    "pt": "Não é possível mostrar os seus lembretes agora. Tente de novo daqui a pouco.",
    "es": "Ahora no se pueden mostrar tus recordatorios. Vuelve a intentarlo en un momento.",
    "fr": "Vos rappels ne peuvent pas être affichés pour l'instant. Réessayez dans un instant.",
    "de": "Ihre Erinnerungen können gerade nicht angezeigt werden. Bitte versuchen Sie es gleich "
    "noch einmal.",
    "it": "I tuoi promemoria non si possono mostrare in questo momento. Riprova tra poco.",
    "nl": "Je herinneringen kunnen nu niet worden getoond. Probeer het zo nog eens.",
    "pl": "Nie można teraz pokazać twoich przypomnień. Spróbuj ponownie za chwilę.",
    "tr": "Hatırlatıcılarınız şu anda gösterilemiyor. Lütfen biraz sonra tekrar deneyin.",
    "id": "Pengingat Anda belum bisa ditampilkan saat ini. Silakan coba lagi dalam beberapa saat.",
    "vi": "Hiện chưa thể hiển thị lời nhắc của bạn. Bạn thử lại sau một lát nhé.",
    "ru": "Сейчас не получается показать ваши напоминания. Попробуйте ещё раз чуть позже.",
    "ar": "لا يمكن عرض تذكيراتك الآن. يُرجى المحاولة مرة أخرى بعد قليل.",
    "hi": "आपके रिमाइंडर अभी नहीं दिखाए जा सकते। कृपया थोड़ी देर में फिर से कोशिश करें।",
    "zh": "现在无法显示你的提醒。请稍后再试。",
    "ja": "今はリマインダーを表示できません。少し待ってから、もう一度お試しください。",
    "ko": "지금은 리마인더를 보여 드릴 수 없어요. 잠시 후에 다시 시도해 주세요.",
}
DEVICES_AWAY: Phrase = {
    "en": "Your devices can't be shown right now. Please try again in a moment.",
    "pt": "Não é possível mostrar os seus aparelhos agora. Tente de novo daqui a pouco.",
    "es": "Ahora no se pueden mostrar tus dispositivos. Vuelve a intentarlo en un momento.",
    "fr": "Vos appareils ne peuvent pas être affichés pour l'instant. Réessayez dans un instant.",
    "de": "Ihre Geräte können gerade nicht angezeigt werden. Bitte versuchen Sie es gleich noch "
    "einmal.",
    "it": "I tuoi dispositivi non si possono mostrare in questo momento. Riprova tra poco.",
    "nl": "Je apparaten kunnen nu niet worden getoond. Probeer het zo nog eens.",
    "pl": "Nie można teraz pokazać twoich urządzeń. Spróbuj ponownie za chwilę.",
    "tr": "Cihazlarınız şu anda gösterilemiyor. Lütfen biraz sonra tekrar deneyin.",
    "id": "Perangkat Anda belum bisa ditampilkan saat ini. Silakan coba lagi dalam beberapa saat.",
    "vi": "Hiện chưa thể hiển thị các thiết bị của bạn. Bạn thử lại sau một lát nhé.",
    "ru": "Сейчас не получается показать ваши устройства. Попробуйте ещё раз чуть позже.",
    "ar": "لا يمكن عرض أجهزتك الآن. يُرجى المحاولة مرة أخرى بعد قليل.",
    "hi": "आपके डिवाइस अभी नहीं दिखाए जा सकते। कृपया थोड़ी देर में फिर से कोशिश करें।",
    "zh": "现在无法显示你的设备。请稍后再试。",
    "ja": "今は端末の一覧を表示できません。少し待ってから、もう一度お試しください。",
    "ko": "지금은 기기 목록을 보여 드릴 수 없어요. 잠시 후에 다시 시도해 주세요.",
}
KEY_SETS_TOO_MANY: Phrase = {
    "en": "You've tried several keys in the last hour. Please wait a while and try again.",
    "pt": "Você tentou várias chaves na última hora. Espere um pouco e tente de novo.",
    "es": "Has probado varias claves en la última hora. Espera un rato y vuelve a intentarlo.",
    "fr": "Vous avez essayé plusieurs clés cette dernière heure. Attendez un peu et réessayez.",
    "de": "Sie haben in der letzten Stunde mehrere Schlüssel versucht. Bitte warten Sie etwas "
    "und versuchen Sie es dann noch einmal.",
    "it": "Hai provato diverse chiavi nell'ultima ora. Aspetta un po' e riprova.",
    "nl": "Je hebt het afgelopen uur meerdere sleutels geprobeerd. Wacht even en probeer het dan "
    "opnieuw.",
    "pl": "W ostatniej godzinie było już kilka prób z różnymi kluczami. Poczekaj trochę i spróbuj "
    "ponownie.",
    "tr": "Son bir saatte birkaç anahtar denediniz. Lütfen biraz bekleyip tekrar deneyin.",
    "id": "Anda sudah mencoba beberapa kunci dalam satu jam terakhir. Silakan tunggu sebentar, "
    "lalu coba lagi.",
    "vi": "Bạn đã thử nhiều khóa trong một giờ qua. Bạn chờ một lúc rồi thử lại nhé.",
    "ru": "За последний час вы попробовали несколько ключей. Подождите немного и попробуйте снова.",
    "ar": "جُرّبت عدة مفاتيح خلال الساعة الماضية. يُرجى الانتظار قليلًا ثم المحاولة مرة أخرى.",
    "hi": "आपने पिछले एक घंटे में कई कुंजियाँ आज़माई हैं। कृपया थोड़ी देर रुककर फिर से कोशिश करें।",
    "zh": "你在过去一小时里试了好几个密钥。请等一会儿再试。",
    "ja": "この1時間で、いくつものキーが試されました。しばらく待ってから、もう一度お試しください。",
    "ko": "지난 한 시간 동안 여러 키를 시도하셨어요. 잠시 기다렸다가 다시 시도해 주세요.",
}
ACCOUNT_AWAY: Phrase = {
    "en": "Your key page can't be shown right now. Please try again in a moment.",
    "pt": "A sua página da chave não pode ser mostrada agora. Tente de novo daqui a pouco.",
    "es": "Tu página de la clave no se puede mostrar ahora. Inténtalo de nuevo en un momento.",
    "fr": "Votre page de clé ne peut pas être affichée. Réessayez dans un instant.",
    "de": "Ihre Schlüsselseite kann gerade nicht angezeigt werden. Bitte gleich noch einmal.",
    "it": "La tua pagina della chiave non si può mostrare in questo momento. Riprova tra poco.",
    "nl": "Je sleutelpagina kan nu niet worden getoond. Probeer het zo nog eens.",
    "pl": "Nie można teraz pokazać twojej strony klucza. Spróbuj ponownie za chwilę.",
    "tr": "Anahtar sayfanız şu anda gösterilemiyor. Lütfen biraz sonra tekrar deneyin.",
    "id": "Halaman kunci Anda belum bisa ditampilkan saat ini. Silakan coba lagi dalam beberapa "
    "saat.",
    "vi": "Hiện chưa thể hiển thị trang khóa của bạn. Bạn thử lại sau một lát nhé.",
    "ru": "Сейчас не получается показать страницу вашего ключа. Попробуйте ещё раз чуть позже.",
    "ar": "لا يمكن عرض صفحة مفتاحك الآن. يُرجى المحاولة مرة أخرى بعد قليل.",
    "hi": "आपका कुंजी वाला पेज अभी नहीं दिखाया जा सकता। कृपया थोड़ी देर में फिर से कोशिश करें।",
    "zh": "现在无法显示你的密钥页面。请稍后再试。",
    "ja": "今はキーのページを表示できません。少し待ってから、もう一度お試しください。",
    "ko": "지금은 키 페이지를 보여 드릴 수 없어요. 잠시 후에 다시 시도해 주세요.",
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
    "it": "Tutto ciò che ti riguarda è stato eliminato da Violet, e tutti i tuoi dispositivi sono "
    "stati disconnessi. Se torni, inizierai una conversazione nuova e vuota.",
    "nl": "Alles van jou is uit Violet verwijderd, en je bent op al je apparaten uitgelogd. Als "
    "je terugkomt, begin je een nieuw, leeg gesprek.",
    "pl": "Wszystko, co cię dotyczy, zostało usunięte z Violet, a wszystkie twoje urządzenia "
    "zostały wylogowane. Jeśli wrócisz, zaczniesz nową, pustą rozmowę.",
    "tr": "Size ait her şey Violet'ten silindi ve tüm cihazlarınızda oturum kapatıldı. Geri "
    "dönerseniz yeni ve boş bir sohbetle başlarsınız.",
    "id": "Semua data Anda sudah dihapus dari Violet, dan semua perangkat Anda sudah keluar. "
    "Kalau Anda kembali, Anda akan memulai percakapan baru yang masih kosong.",
    "vi": "Mọi thứ của bạn đã được xóa khỏi Violet, và tất cả thiết bị của bạn đều đã đăng xuất. "
    "Nếu quay lại, bạn sẽ bắt đầu một cuộc trò chuyện mới, chưa có gì.",
    "ru": "Всё, что связано с вами, удалено из Violet, и на всех ваших устройствах выполнен "
    "выход. Если вы вернётесь, начнётся новый, пустой разговор.",
    "ar": "حُذف كل ما يخصّك من Violet، وسُجّل الخروج من جميع أجهزتك. وعند العودة ستبدأ محادثة "
    "جديدة فارغة.",
    "hi": "Violet से आपका सब कुछ मिटा दिया गया है, और आपके सभी डिवाइस से साइन आउट कर दिया गया है। "
    "वापस आने पर एक नई, खाली बातचीत शुरू होगी।",
    "zh": "你在 Violet 中的所有内容都已删除，所有设备也都已退出登录。如果你再回来，"
    "会开始一段全新的空白对话。",
    "ja": "あなたに関するものはすべてVioletから削除され、すべての端末からログアウトしました。"
    "また来られたときは、新しい空の会話から始まります。",
    "ko": "Violet에서 모든 내용이 삭제되었고, 모든 기기에서 로그아웃되었어요. 다시 오시면 비어 "
    "있는 새 대화로 시작해요.",
}
# The confirmation words stay in English in every language: they are what Violet checks.
NOTHING_DELETED: Phrase = {
    "en": 'Nothing was deleted. To delete everything, type "delete everything".',
    "pt": 'Nada foi apagado. Para apagar tudo, escreva "delete everything".',
    "es": 'No se ha eliminado nada. Para eliminarlo todo, escribe "delete everything".',
    "fr": "Rien n'a été supprimé. Pour tout supprimer, tapez « delete everything ».",
    "de": "Es wurde nichts gelöscht. Um alles zu löschen, tippen Sie „delete everything“.",
    "it": 'Non è stato eliminato nulla. Per eliminare tutto, scrivi "delete everything".',
    "nl": 'Er is niets verwijderd. Typ "delete everything" om alles te verwijderen.',
    "pl": "Nic nie zostało usunięte. Żeby usunąć wszystko, wpisz „delete everything”.",
    "tr": 'Hiçbir şey silinmedi. Her şeyi silmek için "delete everything" yazın.',
    "id": 'Tidak ada yang dihapus. Untuk menghapus semuanya, ketik "delete everything".',
    "vi": 'Chưa có gì bị xóa. Để xóa tất cả, bạn hãy gõ "delete everything".',
    "ru": "Ничего не удалено. Чтобы удалить всё, напишите «delete everything».",
    "ar": "لم يُحذف شيء. لحذف كل شيء، يُرجى كتابة «delete everything».",
    "hi": 'कुछ भी नहीं मिटाया गया। सब कुछ मिटाने के लिए "delete everything" लिखें।',
    "zh": "什么都没有删除。如需删除全部内容，请输入“delete everything”。",
    "ja": "何も削除されていません。すべて削除するには「delete everything」と入力してください。",
    "ko": '아무것도 삭제되지 않았어요. 모두 삭제하려면 "delete everything"라고 입력해 주세요.',
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
    "it": "Violet non è riuscita a finire di eliminare tutto. Riprova tra qualche minuto.",
    "nl": "Het is Violet nu niet gelukt om alles te verwijderen. Probeer het over een paar "
    "minuten opnieuw.",
    "pl": "Violet nie zdołała teraz wszystkiego usunąć. Spróbuj ponownie za kilka minut.",
    "tr": "Violet şu anda her şeyi silmeyi tamamlayamadı. Lütfen birkaç dakika sonra tekrar "
    "deneyin.",
    "id": "Violet belum berhasil menghapus semuanya. Silakan coba lagi dalam beberapa menit.",
    "vi": "Violet chưa thể xóa xong mọi thứ. Bạn thử lại sau vài phút nhé.",
    "ru": "Violet не смогла сейчас удалить всё до конца. Попробуйте ещё раз через несколько минут.",
    "ar": "لم تتمكن Violet من إكمال حذف كل شيء الآن. يُرجى المحاولة مرة أخرى بعد بضع دقائق.",
    "hi": "Violet अभी सब कुछ पूरी तरह नहीं मिटा सकी। कृपया कुछ मिनट बाद फिर से कोशिश करें।",
    "zh": "Violet 暂时没能删完所有内容。请过几分钟再试。",
    "ja": "Violetは今、すべてを削除し終えることができませんでした。"
    "数分後にもう一度お試しください。",
    "ko": "Violet이 지금 모두 삭제하지 못했어요. 몇 분 뒤에 다시 시도해 주세요.",
}
NO_NOTIFICATIONS_HERE: Phrase = {
    "en": "Violet can't send notifications to this browser. Nothing was changed.",
    "pt": "A Violet não consegue enviar notificações para este navegador. Nada foi mudado.",
    "es": "Violet no puede enviar avisos a este navegador. No se ha cambiado nada.",
    "fr": "Violet ne peut pas envoyer de notifications à ce navigateur. Rien n'a été changé.",
    "de": "Violet kann diesem Browser keine Mitteilungen schicken. Es wurde nichts geändert.",
    "it": "Violet non può inviare notifiche a questo browser. Non è cambiato nulla.",
    "nl": "Violet kan geen meldingen naar deze browser sturen. Er is niets veranderd.",
    "pl": "Violet nie może wysyłać powiadomień do tej przeglądarki. Nic nie zostało zmienione.",
    "tr": "Violet bu tarayıcıya bildirim gönderemiyor. Hiçbir şey değiştirilmedi.",
    "id": "Violet tidak bisa mengirim notifikasi ke browser ini. Tidak ada yang diubah.",
    "vi": "Violet không gửi được thông báo đến trình duyệt này. Chưa có gì thay đổi.",
    "ru": "Violet не может отправлять уведомления в этот браузер. Ничего не изменилось.",
    "ar": "لا تستطيع Violet إرسال إشعارات إلى هذا المتصفح. لم يتغير شيء.",
    "hi": "Violet इस ब्राउज़र पर सूचनाएँ नहीं भेज सकती। कुछ भी नहीं बदला गया।",
    "zh": "Violet 无法向这个浏览器发送通知。什么都没有改动。",
    "ja": "Violetはこのブラウザに通知を送れません。何も変更していません。",
    "ko": "Violet은 이 브라우저로 알림을 보낼 수 없어요. 아무것도 바뀌지 않았어요.",
}
NOTIFICATIONS_AWAY: Phrase = {
    "en": "Notifications can't be changed right now. Please try again in a moment.",
    "pt": "As notificações não podem ser mudadas agora. Tente de novo daqui a pouco.",
    "es": "Los avisos no se pueden cambiar ahora mismo. Inténtalo de nuevo en un momento.",
    "fr": "Les notifications ne peuvent pas être modifiées pour le moment. Réessayez dans un "
    "instant.",
    "de": "Die Mitteilungen lassen sich gerade nicht ändern. Versuchen Sie es bitte gleich noch "
    "einmal.",
    "it": "Le notifiche non si possono cambiare in questo momento. Riprova tra poco.",
    "nl": "Meldingen kunnen nu niet worden aangepast. Probeer het zo nog eens.",
    "pl": "Nie można teraz zmienić powiadomień. Spróbuj ponownie za chwilę.",
    "tr": "Bildirimler şu anda değiştirilemiyor. Lütfen biraz sonra tekrar deneyin.",
    "id": "Notifikasi belum bisa diubah saat ini. Silakan coba lagi dalam beberapa saat.",
    "vi": "Hiện chưa thể thay đổi thông báo. Bạn thử lại sau một lát nhé.",
    "ru": "Сейчас не получается изменить уведомления. Попробуйте ещё раз чуть позже.",
    "ar": "لا يمكن تغيير الإشعارات الآن. يُرجى المحاولة مرة أخرى بعد قليل.",
    "hi": "सूचनाएँ अभी नहीं बदली जा सकतीं। कृपया थोड़ी देर में फिर से कोशिश करें।",
    "zh": "现在无法更改通知设置。请稍后再试。",
    "ja": "今は通知の設定を変更できません。少し待ってから、もう一度お試しください。",
    "ko": "지금은 알림 설정을 바꿀 수 없어요. 잠시 후에 다시 시도해 주세요.",
}
