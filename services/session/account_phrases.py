"""What Violet tells a person about their account, in their language: a key refused, a budget
nearly or fully spent, no key to talk with. Plain words; "Anthropic key" is the one name the
person needs, since it is what they bring.

The person is addressed, and Violet speaks of herself, as `violet.language` says."""

from __future__ import annotations

from violet.language import phrase
from violet.models.credentials import Hold, Payer

# Sentence ends after which the next sentence follows without a space (Chinese, Japanese).
FULL_STOPS = ("。", "！", "？")

KEY_REFUSED = {
    "en": "Your Anthropic key was refused, so I've stopped using it.",
    "pt": "Sua chave da Anthropic foi recusada, então parei de usá-la.",
    "es": "Tu clave de Anthropic fue rechazada, así que he dejado de usarla.",
    "fr": "Votre clé Anthropic a été refusée, je ne l'utilise donc plus.",
    "de": "Ihr Anthropic-Schlüssel wurde abgelehnt, daher verwende ich ihn nicht mehr.",
    "it": "La tua chiave Anthropic è stata rifiutata, quindi ho smesso di usarla.",
    "nl": "Je Anthropic-sleutel is geweigerd, dus ik gebruik hem niet meer.",
    "pl": "Twój klucz Anthropic został odrzucony, więc przestałam go używać.",
    "tr": "Anthropic anahtarınız reddedildi, bu yüzden artık onu kullanmıyorum.",
    "id": "Kunci Anthropic Anda ditolak, jadi saya berhenti memakainya.",
    "vi": "Khóa Anthropic của bạn đã bị từ chối, nên mình đã ngừng dùng nó.",
    "ru": "Ваш ключ Anthropic был отклонён, поэтому я перестала его использовать.",
    "ar": "رُفض مفتاح Anthropic الخاص بك، لذلك توقفتُ عن استخدامه.",
    "hi": "आपकी Anthropic कुंजी अस्वीकार कर दी गई, इसलिए मैं अब उसका इस्तेमाल नहीं कर रही हूँ।",
    "zh": "你的 Anthropic 密钥被拒绝了，所以我已经停止使用它。",
    "ja": "Anthropicのキーが拒否されたため、使うのをやめました。",
    "ko": "Anthropic 키가 거부되어서 더 이상 사용하지 않아요.",
}
AFTER_REFUSAL = {
    Payer.OPERATOR: {
        "en": "I'll carry on with Violet's own account until you add a new key on your key page.",
        "pt": "Continuo com a conta da Violet até você adicionar uma nova chave na sua página da "
        "chave.",
        "es": "Seguiré con la cuenta de Violet hasta que añadas una clave nueva en tu página de "
        "la clave.",
        "fr": "Je continue avec le compte de Violet jusqu'à ce que vous ajoutiez une nouvelle clé "
        "sur votre page de clé.",
        "de": "Ich mache mit Violets eigenem Konto weiter, bis Sie auf Ihrer Schlüsselseite einen "
        "neuen Schlüssel hinterlegen.",
        "it": "Continuerò con l'account di Violet finché non aggiungerai una nuova chiave nella "
        "tua pagina della chiave.",
        "nl": "Ik ga verder met Violets eigen account tot je een nieuwe sleutel toevoegt op je "
        "sleutelpagina.",
        "pl": "Będę dalej korzystać z konta Violet, dopóki nie dodasz nowego klucza na swojej "
        "stronie klucza.",
        "tr": "Anahtar sayfanıza yeni bir anahtar ekleyene kadar Violet'in kendi hesabıyla devam "
        "edeceğim.",
        "id": "Saya akan lanjut memakai akun Violet sendiri sampai Anda menambahkan kunci baru di "
        "halaman kunci Anda.",
        "vi": "Mình sẽ tiếp tục dùng tài khoản riêng của Violet cho đến khi bạn thêm khóa mới ở "
        "trang khóa của bạn.",
        "ru": "Я продолжу работать через собственный аккаунт Violet, пока вы не добавите новый "
        "ключ на странице ключа.",
        "ar": "سأواصل العمل بحساب Violet نفسه إلى أن يُضاف مفتاح جديد في صفحة مفتاحك.",
        "hi": "आपके कुंजी वाले पेज पर नई कुंजी जुड़ने तक, मैं Violet के अपने खाते से काम चलाती रहूँगी।",
        "zh": "在你到密钥页面添加新密钥之前，我会先用 Violet 自己的账户继续。",
        "ja": "キーのページで新しいキーを追加していただくまで、Violet自身のアカウントで続けます。",
        "ko": "키 페이지에 새 키를 추가하실 때까지 Violet 자체 계정으로 계속할게요.",
    },
    Payer.BUILT_IN: {
        "en": "Until you add a new key on your key page, I'll answer with my simpler built-in "
        "replies.",
        "pt": "Até você adicionar uma nova chave na sua página da chave, respondo com as minhas "
        "respostas simples.",
        "es": "Hasta que añadas una clave nueva en tu página de la clave, responderé con mis "
        "respuestas sencillas.",
        "fr": "Jusqu'à ce que vous ajoutiez une nouvelle clé sur votre page de clé, je réponds "
        "avec mes réponses simples.",
        "de": "Bis Sie auf Ihrer Schlüsselseite einen neuen Schlüssel hinterlegen, antworte ich "
        "mit meinen einfachen Antworten.",
        "it": "Finché non aggiungerai una nuova chiave nella tua pagina della chiave, risponderò "
        "con le mie risposte più semplici.",
        "nl": "Tot je een nieuwe sleutel toevoegt op je sleutelpagina, antwoord ik met mijn "
        "eigen, eenvoudigere antwoorden.",
        "pl": "Dopóki nie dodasz nowego klucza na swojej stronie klucza, będę korzystać z "
        "prostszych, gotowych odpowiedzi.",
        "tr": "Anahtar sayfanıza yeni bir anahtar ekleyene kadar daha basit, hazır yanıtlarımla "
        "cevap vereceğim.",
        "id": "Sampai Anda menambahkan kunci baru di halaman kunci Anda, saya akan menjawab "
        "dengan jawaban bawaan saya yang lebih sederhana.",
        "vi": "Cho đến khi bạn thêm khóa mới ở trang khóa, mình sẽ trả lời bằng những câu trả lời "
        "có sẵn, đơn giản hơn.",
        "ru": "Пока вы не добавите новый ключ на странице ключа, я буду давать свои, более "
        "простые ответы.",
        "ar": "إلى أن يُضاف مفتاح جديد في صفحة مفتاحك، سأجيب بردود أبسط من عندي.",
        "hi": "आपके कुंजी वाले पेज पर नई कुंजी जुड़ने तक, मैं अपने सरल, पहले से तैयार जवाबों से जवाब दूँगी।",
        "zh": "在你到密钥页面添加新密钥之前，我会用自带的简单回复来回答。",
        "ja": "キーのページで新しいキーを追加していただくまで、私が用意している簡単な返事でお答え"
        "します。",
        "ko": "키 페이지에 새 키를 추가하실 때까지는 제가 가진 간단한 답변으로 대답할게요.",
    },
    Payer.NOBODY: {
        "en": "To go on, add a working key on your key page.",
        "pt": "Para continuar, adicione uma chave que funcione na sua página da chave.",
        "es": "Para seguir, añade una clave que funcione en tu página de la clave.",
        "fr": "Pour continuer, ajoutez une clé qui fonctionne sur votre page de clé.",
        "de": "Um weiterzumachen, hinterlegen Sie auf Ihrer Schlüsselseite einen funktionierenden "
        "Schlüssel.",
        "it": "Per continuare, aggiungi una chiave che funzioni nella tua pagina della chiave.",
        "nl": "Voeg op je sleutelpagina een werkende sleutel toe om verder te gaan.",
        "pl": "Żeby kontynuować, dodaj działający klucz na swojej stronie klucza.",
        "tr": "Devam etmek için anahtar sayfanıza çalışan bir anahtar ekleyin.",
        "id": "Untuk melanjutkan, tambahkan kunci yang berfungsi di halaman kunci Anda.",
        "vi": "Để tiếp tục, bạn hãy thêm một khóa dùng được ở trang khóa nhé.",
        "ru": "Чтобы продолжить, добавьте рабочий ключ на странице ключа.",
        "ar": "للمتابعة، يُرجى إضافة مفتاح صالح في صفحة مفتاحك.",
        "hi": "आगे बढ़ने के लिए, अपने कुंजी वाले पेज पर एक काम करने वाली कुंजी जोड़ें।",
        "zh": "要继续使用，请在密钥页面添加一个可用的密钥。",
        "ja": "続けるには、キーのページで使えるキーを追加してください。",
        "ko": "계속하려면 키 페이지에 작동하는 키를 추가해 주세요.",
    },
}
NEAR = {
    "day": {
        "en": "Just so you know: you've used most of today's allowance. At the limit I'll pause "
        "until tomorrow, and keep everything.",
        "pt": "Só para avisar: você já usou a maior parte do limite de hoje. No limite, faço uma "
        "pausa até amanhã e guardo tudo.",
        "es": "Para que lo sepas: has usado casi todo el límite de hoy. Al llegar, pararé hasta "
        "mañana y lo guardaré todo.",
        "fr": "Pour information : vous avez utilisé presque toute la limite d'aujourd'hui. Une "
        "fois atteinte, je fais une pause jusqu'à demain et je garde tout.",
        "de": "Zur Info: Sie haben das heutige Kontingent fast aufgebraucht. Am Limit pausiere "
        "ich bis morgen und behalte alles.",
        "it": "Ti avviso: hai usato quasi tutto il limite di oggi. Quando lo raggiungi mi fermo "
        "fino a domani, e conservo tutto.",
        "nl": "Even ter info: je hebt het meeste van je limiet voor vandaag al gebruikt. Als die "
        "op is, pauzeer ik tot morgen en bewaar ik alles.",
        "pl": "Daję znać: dzisiejszy limit jest już prawie wykorzystany. Gdy się skończy, zrobię "
        "przerwę do jutra i wszystko zachowam.",
        "tr": "Bilginiz olsun: bugünkü limitinizin çoğunu kullandınız. Limite ulaşınca yarına "
        "kadar ara vereceğim ve her şeyi saklayacağım.",
        "id": "Sekadar info: Anda sudah memakai sebagian besar batas hari ini. Begitu batasnya "
        "tercapai, saya akan berhenti sampai besok, dan semuanya tetap tersimpan.",
        "vi": "Cho bạn biết: bạn đã dùng gần hết hạn mức hôm nay. Khi chạm mức đó, mình sẽ tạm "
        "dừng đến ngày mai và giữ lại mọi thứ.",
        "ru": "Просто чтобы вы знали: вы израсходовали почти весь сегодняшний лимит. Когда он "
        "закончится, я сделаю паузу до завтра и всё сохраню.",
        "ar": "للعلم: استُهلك معظم الحدّ المتاح لليوم. عند بلوغه سأتوقف حتى الغد، وسأحتفظ بكل شيء.",
        "hi": "बस बता दूँ: आपने आज की सीमा का ज़्यादातर हिस्सा इस्तेमाल कर लिया है। सीमा पूरी "
        "होने पर मैं कल तक रुक जाऊँगी, और सब कुछ सँभालकर रखूँगी।",
        "zh": "跟你说一声：今天的额度你已经用掉大半了。用完后我会暂停到明天，所有内容都会保留。",
        "ja": "お知らせです。今日の利用上限に近づいています。上限に達したら明日まで休みますが、"
        "内容はすべて残しておきます。",
        "ko": "알려 드려요. 오늘 한도를 거의 다 쓰셨어요. 한도에 도달하면 내일까지 쉬고, 모든 "
        "내용은 그대로 둘게요.",
    },
    "month": {
        "en": "Just so you know: you've used most of this month's allowance. At the limit I'll "
        "pause until next month, and keep everything.",
        "pt": "Só para avisar: você já usou a maior parte do limite deste mês. No limite, faço "
        "uma pausa até o próximo mês e guardo tudo.",
        "es": "Para que lo sepas: has usado casi todo el límite de este mes. Al llegar, pararé "
        "hasta el mes que viene y lo guardaré todo.",
        "fr": "Pour information : vous avez utilisé presque toute la limite de ce mois. Une fois "
        "atteinte, je fais une pause jusqu'au mois prochain et je garde tout.",
        "de": "Zur Info: Sie haben das Kontingent dieses Monats fast aufgebraucht. Am Limit "
        "pausiere ich bis nächsten Monat und behalte alles.",
        "it": "Ti avviso: hai usato quasi tutto il limite di questo mese. Quando lo raggiungi mi "
        "fermo fino al mese prossimo, e conservo tutto.",
        "nl": "Even ter info: je hebt het meeste van je limiet voor deze maand al gebruikt. Als "
        "die op is, pauzeer ik tot volgende maand en bewaar ik alles.",
        "pl": "Daję znać: limit na ten miesiąc jest już prawie wykorzystany. Gdy się skończy, "
        "zrobię przerwę do przyszłego miesiąca i wszystko zachowam.",
        "tr": "Bilginiz olsun: bu ayki limitinizin çoğunu kullandınız. Limite ulaşınca gelecek "
        "aya kadar ara vereceğim ve her şeyi saklayacağım.",
        "id": "Sekadar info: Anda sudah memakai sebagian besar batas bulan ini. Begitu batasnya "
        "tercapai, saya akan berhenti sampai bulan depan, dan semuanya tetap tersimpan.",
        "vi": "Cho bạn biết: bạn đã dùng gần hết hạn mức tháng này. Khi chạm mức đó, mình sẽ tạm "
        "dừng đến tháng sau và giữ lại mọi thứ.",
        "ru": "Просто чтобы вы знали: вы израсходовали почти весь лимит этого месяца. Когда он "
        "закончится, я сделаю паузу до следующего месяца и всё сохраню.",
        "ar": "للعلم: استُهلك معظم الحدّ المتاح لهذا الشهر. عند بلوغه سأتوقف حتى الشهر القادم، "
        "وسأحتفظ بكل شيء.",
        "hi": "बस बता दूँ: आपने इस महीने की सीमा का ज़्यादातर हिस्सा इस्तेमाल कर लिया है। सीमा "
        "पूरी होने पर मैं अगले महीने तक रुक जाऊँगी, और सब कुछ सँभालकर रखूँगी।",
        "zh": "跟你说一声：这个月的额度你已经用掉大半了。用完后我会暂停到下个月，"
        "所有内容都会保留。",
        "ja": "お知らせです。今月の利用上限に近づいています。上限に達したら来月まで休みますが、"
        "内容はすべて残しておきます。",
        "ko": "알려 드려요. 이번 달 한도를 거의 다 쓰셨어요. 한도에 도달하면 다음 달까지 쉬고, "
        "모든 내용은 그대로 둘게요.",
    },
}
HELD = {
    Hold.BUDGET_DAY: {
        "en": "You've reached today's limit, so I'm pausing until tomorrow. I've kept what you "
        "said, and anything I'm working on carries on then.",
        "pt": "Você chegou ao limite de hoje, então vou fazer uma pausa até amanhã. Guardei o que "
        "você disse, e o que eu estiver fazendo continua a partir daí.",
        "es": "Has llegado al límite de hoy, así que paro hasta mañana. He guardado lo que has "
        "dicho, y lo que estoy haciendo seguirá entonces.",
        "fr": "Vous avez atteint la limite d'aujourd'hui, je fais donc une pause jusqu'à demain. "
        "J'ai gardé ce que vous avez dit, et ce que je fais reprendra à ce moment-là.",
        "de": "Sie haben das heutige Limit erreicht, daher pausiere ich bis morgen. Was Sie "
        "gesagt haben, ist gespeichert, und meine laufenden Aufgaben gehen dann weiter.",
        "it": "Hai raggiunto il limite di oggi, quindi mi fermo fino a domani. Ho conservato "
        "quello che hai detto, e quello che sto facendo riprenderà allora.",
        "nl": "Je hebt de limiet van vandaag bereikt, dus ik pauzeer tot morgen. Ik heb bewaard "
        "wat je zei, en waar ik mee bezig ben, gaat dan verder.",
        "pl": "Dzisiejszy limit się wyczerpał, więc robię przerwę do jutra. Zachowałam twoje "
        "wiadomości, a nad tym, co zaczęłam, popracuję dalej jutro.",
        "tr": "Bugünkü limitinize ulaştınız, bu yüzden yarına kadar ara veriyorum. "
        "Söylediklerinizi sakladım; üzerinde çalıştığım her şey o zaman devam edecek.",
        "id": "Anda sudah mencapai batas hari ini, jadi saya berhenti dulu sampai besok. Pesan "
        "Anda sudah saya simpan, dan pekerjaan yang sedang saya kerjakan akan dilanjutkan besok.",
        "vi": "Bạn đã chạm hạn mức hôm nay, nên mình tạm dừng đến ngày mai. Mình đã giữ lại những "
        "gì bạn nói, và việc mình đang làm sẽ tiếp tục lúc đó.",
        "ru": "Вы достигли сегодняшнего лимита, поэтому я делаю паузу до завтра. Я сохранила всё, "
        "что вы написали, и тогда продолжу начатое.",
        "ar": "بلغ استهلاكك حدّ اليوم، لذلك سأتوقف مؤقتًا حتى الغد. احتفظتُ برسائلك، وسأكمل ما "
        "أعمل عليه حينها.",
        "hi": "आज की सीमा पूरी हो गई है, इसलिए मैं कल तक रुक रही हूँ। आपने जो कहा, वह मैंने "
        "सँभालकर रखा है, और जिस काम पर मैं लगी हूँ, वह तब आगे बढ़ेगा।",
        "zh": "今天的额度已经用完了，所以我先暂停到明天。你说的话我都保存好了，"
        "我手上的事到时会接着做。",
        "ja": "今日の上限に達したため、明日までお休みします。いただいたメッセージは保存してあり、"
        "作業中のことはその時に再開します。",
        "ko": "오늘 한도에 도달해서 내일까지 쉴게요. 하신 말씀은 저장해 두었고, 하던 일은 그때 "
        "이어서 할게요.",
    },
    Hold.BUDGET_MONTH: {
        "en": "You've reached this month's limit, so I'm pausing until next month. I've kept "
        "what you said, and anything I'm working on carries on then.",
        "pt": "Você chegou ao limite deste mês, então vou fazer uma pausa até o próximo mês. "
        "Guardei o que você disse, e o que eu estiver fazendo continua a partir daí.",
        "es": "Has llegado al límite de este mes, así que paro hasta el mes que viene. He "
        "guardado lo que has dicho, y lo que estoy haciendo seguirá entonces.",
        "fr": "Vous avez atteint la limite de ce mois, je fais donc une pause jusqu'au mois "
        "prochain. J'ai gardé ce que vous avez dit, et ce que je fais reprendra alors.",
        "de": "Sie haben das Limit dieses Monats erreicht, daher pausiere ich bis nächsten "
        "Monat. Was Sie gesagt haben, ist gespeichert, und meine Aufgaben gehen dann weiter.",
        "it": "Hai raggiunto il limite di questo mese, quindi mi fermo fino al mese prossimo. Ho "
        "conservato quello che hai detto, e quello che sto facendo riprenderà allora.",
        "nl": "Je hebt de limiet van deze maand bereikt, dus ik pauzeer tot volgende maand. Ik "
        "heb bewaard wat je zei, en waar ik mee bezig ben, gaat dan verder.",
        "pl": "Limit na ten miesiąc się wyczerpał, więc robię przerwę do przyszłego miesiąca. "
        "Zachowałam twoje wiadomości, a nad tym, co zaczęłam, popracuję dalej w przyszłym "
        "miesiącu.",
        "tr": "Bu ayki limitinize ulaştınız, bu yüzden gelecek aya kadar ara veriyorum. "
        "Söylediklerinizi sakladım; üzerinde çalıştığım her şey o zaman devam edecek.",
        "id": "Anda sudah mencapai batas bulan ini, jadi saya berhenti dulu sampai bulan depan. "
        "Pesan Anda sudah saya simpan, dan pekerjaan yang sedang saya kerjakan akan dilanjutkan "
        "bulan depan.",
        "vi": "Bạn đã chạm hạn mức tháng này, nên mình tạm dừng đến tháng sau. Mình đã giữ lại "
        "những gì bạn nói, và việc mình đang làm sẽ tiếp tục lúc đó.",
        "ru": "Вы достигли лимита этого месяца, поэтому я делаю паузу до следующего месяца. Я "
        "сохранила всё, что вы написали, и тогда продолжу начатое.",
        "ar": "بلغ استهلاكك حدّ هذا الشهر، لذلك سأتوقف مؤقتًا حتى الشهر القادم. احتفظتُ برسائلك، "
        "وسأكمل ما أعمل عليه حينها.",
        "hi": "इस महीने की सीमा पूरी हो गई है, इसलिए मैं अगले महीने तक रुक रही हूँ। आपने जो कहा, "
        "वह मैंने सँभालकर रखा है, और जिस काम पर मैं लगी हूँ, वह तब आगे बढ़ेगा।",
        "zh": "这个月的额度已经用完了，所以我先暂停到下个月。你说的话我都保存好了，"
        "我手上的事到时会接着做。",
        "ja": "今月の上限に達したため、来月までお休みします。いただいたメッセージは保存してあり、"
        "作業中のことはその時に再開します。",
        "ko": "이번 달 한도에 도달해서 다음 달까지 쉴게요. 하신 말씀은 저장해 두었고, 하던 일은 "
        "그때 이어서 할게요.",
    },
    Hold.NO_KEY: {
        "en": "To talk with me, add your own Anthropic key on your key page (in the chat, type "
        "/key). I've kept what you said.",
        "pt": "Para falar comigo, adicione sua chave da Anthropic na sua página da chave (no "
        "chat, escreva /key). Guardei o que você disse.",
        "es": "Para hablar conmigo, añade tu propia clave de Anthropic en tu página de la clave "
        "(en el chat, escribe /key). He guardado lo que has dicho.",
        "fr": "Pour me parler, ajoutez votre propre clé Anthropic sur votre page de clé (dans le "
        "chat, tapez /key). J'ai gardé ce que vous avez dit.",
        "de": "Um mit mir zu sprechen, hinterlegen Sie Ihren eigenen Anthropic-Schlüssel auf "
        "Ihrer Schlüsselseite (im Chat: /key). Was Sie gesagt haben, ist gespeichert.",
        "it": "Per parlare con me, aggiungi la tua chiave Anthropic nella tua pagina della chiave "
        "(in chat, scrivi /key). Ho conservato quello che hai detto.",
        "nl": "Om met mij te praten, voeg je je eigen Anthropic-sleutel toe op je sleutelpagina "
        "(typ in de chat /key). Ik heb bewaard wat je zei.",
        "pl": "Żeby ze mną rozmawiać, dodaj własny klucz Anthropic na swojej stronie klucza (w "
        "czacie wpisz /key). Zachowałam twoje wiadomości.",
        "tr": "Benimle konuşmak için anahtar sayfanıza kendi Anthropic anahtarınızı ekleyin "
        "(sohbete /key yazın). Söylediklerinizi sakladım.",
        "id": "Untuk mengobrol dengan saya, tambahkan kunci Anthropic Anda sendiri di halaman "
        "kunci Anda (di chat, ketik /key). Pesan Anda sudah saya simpan.",
        "vi": "Để trò chuyện với mình, bạn hãy thêm khóa Anthropic của riêng bạn ở trang khóa "
        "(trong khung chat, gõ /key). Mình đã giữ lại những gì bạn nói.",
        "ru": "Чтобы говорить со мной, добавьте свой ключ Anthropic на странице ключа (в чате "
        "напишите /key). Я сохранила всё, что вы написали.",
        "ar": "للتحدث معي، يُرجى إضافة مفتاح Anthropic الخاص بك في صفحة مفتاحك (في المحادثة، تكفي "
        "كتابة /key). احتفظتُ برسائلك.",
        "hi": "मुझसे बात करने के लिए, अपने कुंजी वाले पेज पर अपनी Anthropic कुंजी जोड़ें (चैट में "
        "/key लिखें)। आपने जो कहा, वह मैंने सँभालकर रखा है।",
        "zh": "要和我聊天，请在密钥页面添加你自己的 Anthropic 密钥（在聊天里输入 "
        "/key）。你说的话我都保存好了。",
        "ja": "私と話すには、キーのページでご自身のAnthropicのキーを追加してください（チャットで "
        "/key と入力）。いただいたメッセージは保存してあります。",
        "ko": "저와 대화하려면 키 페이지에서 본인의 Anthropic 키를 추가해 주세요(채팅에서 /key "
        "입력). 하신 말씀은 저장해 두었어요.",
    },
}
KEY_STATE = {
    "none": {
        "en": "You have no Anthropic key of your own here.",
        "pt": "Você não tem uma chave da Anthropic sua aqui.",
        "es": "No tienes aquí una clave de Anthropic propia.",
        "fr": "Vous n'avez pas ici de clé Anthropic à vous.",
        "de": "Sie haben hier keinen eigenen Anthropic-Schlüssel.",
        "it": "Qui non hai una tua chiave Anthropic.",
        "nl": "Je hebt hier geen eigen Anthropic-sleutel.",
        "pl": "Nie masz tu własnego klucza Anthropic.",
        "tr": "Burada size ait bir Anthropic anahtarı yok.",
        "id": "Anda belum punya kunci Anthropic sendiri di sini.",
        "vi": "Bạn chưa có khóa Anthropic riêng ở đây.",
        "ru": "У вас здесь нет своего ключа Anthropic.",
        "ar": "ليس لديك هنا مفتاح Anthropic خاص بك.",
        "hi": "यहाँ आपकी अपनी कोई Anthropic कुंजी नहीं है।",
        "zh": "你在这里还没有自己的 Anthropic 密钥。",
        "ja": "ここにはご自身のAnthropicのキーがありません。",
        "ko": "여기에는 본인의 Anthropic 키가 없어요.",
    },
    "yours": {
        "en": "Your own Anthropic key ending in {ending} is in use. This month: ${month:.2f}.",
        "pt": "Sua chave da Anthropic terminada em {ending} está em uso. Este mês: ${month:.2f}.",
        "es": "Se usa tu clave de Anthropic que termina en {ending}. Este mes: ${month:.2f}.",
        "fr": "Votre clé Anthropic se terminant par {ending} est utilisée. Ce mois-ci : "
        "{month:.2f} $.",
        "de": "Ihr Anthropic-Schlüssel mit der Endung {ending} wird verwendet. Diesen Monat: "
        "{month:.2f} $.",
        "it": "È in uso la tua chiave Anthropic che finisce con {ending}. Questo mese: "
        "{month:.2f} $.",
        "nl": "Je eigen Anthropic-sleutel die eindigt op {ending} wordt gebruikt. Deze maand: "
        "${month:.2f}.",
        "pl": "Używam twojego klucza Anthropic kończącego się na {ending}. W tym miesiącu: "
        "{month:.2f} $.",
        "tr": "Sonu {ending} ile biten kendi Anthropic anahtarınız kullanılıyor. Bu ay: "
        "${month:.2f}.",
        "id": "Kunci Anthropic Anda sendiri yang berakhiran {ending} sedang dipakai. Bulan ini: "
        "${month:.2f}.",
        "vi": "Đang dùng khóa Anthropic của riêng bạn có đuôi {ending}. Tháng này: ${month:.2f}.",
        "ru": "Используется ваш собственный ключ Anthropic, который заканчивается на {ending}. В "
        "этом месяце: {month:.2f} $.",
        "ar": "يُستخدم مفتاح Anthropic الخاص بك المنتهي بـ {ending}. هذا الشهر: {month:.2f} دولار.",
        "hi": "आपकी अपनी Anthropic कुंजी, जिसके आख़िर में {ending} है, इस्तेमाल हो रही है। इस "
        "महीने: ${month:.2f}।",
        "zh": "正在使用你自己的 Anthropic 密钥（结尾为 {ending}）。本月：{month:.2f} 美元。",
        "ja": "末尾が {ending} のご自身のAnthropicのキーを使っています。今月の利用額："
        "${month:.2f}。",
        "ko": "끝자리가 {ending}인 본인의 Anthropic 키를 사용하고 있어요. 이번 달 사용액: "
        "${month:.2f}.",
    },
    "refused": {
        "en": "Your Anthropic key ending in {ending} was refused and is not used. Add a new one "
        "to use your own account again.",
        "pt": "Sua chave da Anthropic terminada em {ending} foi recusada e não está sendo usada. "
        "Adicione uma nova para voltar a usar sua conta.",
        "es": "Tu clave de Anthropic que termina en {ending} fue rechazada y no se usa. Añade "
        "una nueva para volver a usar tu cuenta.",
        "fr": "Votre clé Anthropic se terminant par {ending} a été refusée et n'est pas utilisée. "
        "Ajoutez-en une nouvelle pour utiliser à nouveau votre compte.",
        "de": "Ihr Anthropic-Schlüssel mit der Endung {ending} wurde abgelehnt und wird nicht "
        "verwendet. Hinterlegen Sie einen neuen, um Ihr Konto wieder zu nutzen.",
        "it": "La tua chiave Anthropic che finisce con {ending} è stata rifiutata e non viene "
        "usata. Aggiungine una nuova per usare di nuovo il tuo account.",
        "nl": "Je Anthropic-sleutel die eindigt op {ending} is geweigerd en wordt niet gebruikt. "
        "Voeg een nieuwe toe om je eigen account weer te gebruiken.",
        "pl": "Twój klucz Anthropic kończący się na {ending} został odrzucony i nie jest używany. "
        "Dodaj nowy, żeby znów korzystać z własnego konta.",
        "tr": "Sonu {ending} ile biten Anthropic anahtarınız reddedildi ve kullanılmıyor. Kendi "
        "hesabınızı yeniden kullanmak için yeni bir anahtar ekleyin.",
        "id": "Kunci Anthropic Anda yang berakhiran {ending} ditolak dan tidak dipakai. Tambahkan "
        "kunci baru untuk memakai akun Anda sendiri lagi.",
        "vi": "Khóa Anthropic của bạn có đuôi {ending} đã bị từ chối nên không được dùng. Hãy "
        "thêm khóa mới để dùng lại tài khoản của riêng bạn.",
        "ru": "Ваш ключ Anthropic, который заканчивается на {ending}, был отклонён и не "
        "используется. Добавьте новый, чтобы снова пользоваться своим аккаунтом.",
        "ar": "رُفض مفتاح Anthropic الخاص بك المنتهي بـ {ending}، ولا يُستخدم الآن. يُرجى إضافة "
        "مفتاح جديد لاستخدام حسابك الخاص من جديد.",
        "hi": "आपकी Anthropic कुंजी, जिसके आख़िर में {ending} है, अस्वीकार कर दी गई है और "
        "इस्तेमाल नहीं हो रही। अपना खाता फिर से इस्तेमाल करने के लिए नई कुंजी जोड़ें।",
        "zh": "你结尾为 {ending} 的 Anthropic 密钥被拒绝了，目前没有使用。添加一个新密钥，"
        "就能重新用你自己的账户。",
        "ja": "末尾が {ending} のAnthropicのキーは拒否されたため、使っていません。"
        "ご自身のアカウントをまた使うには、新しいキーを追加してください。",
        "ko": "끝자리가 {ending}인 Anthropic 키가 거부되어 사용하지 않고 있어요. 본인 계정을 다시 "
        "쓰려면 새 키를 추가해 주세요.",
    },
}
NOT_KEPT = {
    "refused": {
        "en": "Anthropic refused that key, so I didn't keep it. Nothing else changed.",
        "pt": "A Anthropic recusou essa chave, então não a guardei. Nada mais mudou.",
        "es": "Anthropic rechazó esa clave, así que no la he guardado. Nada más ha cambiado.",
        "fr": "Anthropic a refusé cette clé, je ne l'ai donc pas gardée. Rien d'autre n'a changé.",
        "de": "Anthropic hat diesen Schlüssel abgelehnt, daher habe ich ihn nicht gespeichert. "
        "Sonst hat sich nichts geändert.",
        "it": "Anthropic ha rifiutato questa chiave, quindi non l'ho salvata. Non è cambiato "
        "nient'altro.",
        "nl": "Anthropic heeft die sleutel geweigerd, dus ik heb hem niet bewaard. Verder is er "
        "niets veranderd.",
        "pl": "Anthropic odrzucił ten klucz, więc go nie zapisałam. Nic innego się nie zmieniło.",
        "tr": "Anthropic bu anahtarı reddetti, bu yüzden saklamadım. Başka hiçbir şey değişmedi.",
        "id": "Anthropic menolak kunci itu, jadi tidak saya simpan. Tidak ada hal lain yang "
        "berubah.",
        "vi": "Anthropic đã từ chối khóa đó nên mình không lưu lại. Không có gì khác thay đổi.",
        "ru": "Anthropic отклонил этот ключ, поэтому я его не сохранила. Больше ничего не "
        "изменилось.",
        "ar": "رفضت Anthropic هذا المفتاح، لذلك لم أحتفظ به. لم يتغير شيء آخر.",
        "hi": "Anthropic ने यह कुंजी अस्वीकार कर दी, इसलिए मैंने इसे नहीं रखा। और कुछ नहीं बदला।",
        "zh": "Anthropic 拒绝了这个密钥，所以我没有保存。其他都没有变。",
        "ja": "Anthropicがこのキーを拒否したため、保存しませんでした。ほかは何も変わっていません。",
        "ko": "Anthropic이 이 키를 거부해서 저장하지 않았어요. 다른 건 바뀐 게 없어요.",
    },
    "unchecked": {
        "en": "I couldn't check that key with Anthropic just now, so I didn't keep it. Please "
        "try again in a moment.",
        "pt": "Não consegui verificar essa chave com a Anthropic agora, então não a guardei. "
        "Tente de novo daqui a pouco.",
        "es": "No he podido comprobar esa clave con Anthropic ahora, así que no la he guardado. "
        "Inténtalo de nuevo en un momento.",
        "fr": "Je n'ai pas pu vérifier cette clé auprès d'Anthropic, je ne l'ai donc pas gardée. "
        "Réessayez dans un instant.",
        "de": "Ich konnte diesen Schlüssel gerade nicht bei Anthropic prüfen und habe ihn daher "
        "nicht gespeichert. Bitte versuchen Sie es gleich noch einmal.",
        "it": "Non sono riuscita a verificare questa chiave con Anthropic in questo momento, "
        "quindi non l'ho salvata. Riprova tra poco.",
        "nl": "Ik kon die sleutel nu niet bij Anthropic controleren, dus ik heb hem niet bewaard. "
        "Probeer het zo nog eens.",
        "pl": "Nie udało mi się teraz sprawdzić tego klucza w Anthropic, więc go nie zapisałam. "
        "Spróbuj ponownie za chwilę.",
        "tr": "Bu anahtarı şu anda Anthropic ile doğrulayamadım, bu yüzden saklamadım. Lütfen "
        "biraz sonra tekrar deneyin.",
        "id": "Saya belum bisa memeriksa kunci itu ke Anthropic, jadi tidak saya simpan. Silakan "
        "coba lagi dalam beberapa saat.",
        "vi": "Lúc này mình chưa kiểm tra được khóa đó với Anthropic nên chưa lưu lại. Bạn thử "
        "lại sau một lát nhé.",
        "ru": "Мне не удалось сейчас проверить этот ключ в Anthropic, поэтому я его не сохранила. "
        "Попробуйте ещё раз чуть позже.",
        "ar": "لم أتمكن من التحقق من هذا المفتاح لدى Anthropic الآن، لذلك لم أحتفظ به. يُرجى "
        "المحاولة مرة أخرى بعد قليل.",
        "hi": "मैं अभी Anthropic से यह कुंजी जाँच नहीं पाई, इसलिए मैंने इसे नहीं रखा। कृपया थोड़ी "
        "देर में फिर से कोशिश करें।",
        "zh": "我暂时没能向 Anthropic 验证这个密钥，所以没有保存。请稍后再试。",
        "ja": "今はAnthropicでこのキーを確認できなかったため、保存しませんでした。少し待ってから、"
        "もう一度お試しください。",
        "ko": "지금 Anthropic에서 이 키를 확인하지 못해서 저장하지 않았어요. 잠시 후에 다시 "
        "시도해 주세요.",
    },
    "empty": {
        "en": "That was empty: paste your whole Anthropic key.",
        "pt": "Veio vazio: cole sua chave da Anthropic inteira.",
        "es": "Estaba vacío: pega tu clave de Anthropic completa.",
        "fr": "C'était vide : collez votre clé Anthropic en entier.",
        "de": "Das war leer: Fügen Sie Ihren ganzen Anthropic-Schlüssel ein.",
        "it": "Era vuoto: incolla la tua chiave Anthropic completa.",
        "nl": "Dat was leeg: plak je hele Anthropic-sleutel.",
        "pl": "To było puste: wklej cały klucz Anthropic.",
        "tr": "Boş geldi: Anthropic anahtarınızın tamamını yapıştırın.",
        "id": "Isinya kosong: tempel kunci Anthropic Anda secara lengkap.",
        "vi": "Bạn chưa dán gì cả: hãy dán đầy đủ khóa Anthropic nhé.",
        "ru": "Здесь пусто: вставьте ключ Anthropic целиком.",
        "ar": "لم يصلني شيء: يُرجى لصق مفتاح Anthropic كاملًا.",
        "hi": "यह खाली था: अपनी पूरी Anthropic कुंजी पेस्ट करें।",
        "zh": "内容是空的：请粘贴完整的 Anthropic 密钥。",
        "ja": "空欄でした。Anthropicのキーを全部貼り付けてください。",
        "ko": "비어 있었어요. Anthropic 키 전체를 붙여 넣어 주세요.",
    },
}


def notice_phrase(notice: str, payer: Payer, language: str) -> str:
    """A notice (`session.accounts`) in words: `key_refused:WHEN` or `near:day|month:WHEN`."""
    kind, _, rest = notice.partition(":")
    if kind == "near":
        return phrase(NEAR[rest.partition(":")[0]], language)
    after = AFTER_REFUSAL.get(payer)
    refused = phrase(KEY_REFUSED, language)
    if not after:
        return refused
    # Chinese and Japanese sentences follow one another without a space.
    space = "" if refused.endswith(FULL_STOPS) else " "
    return f"{refused}{space}{phrase(after, language)}"


# The account paying for the person's calls reached a spending limit (`SpendLimitReached`).
SPEND_LIMIT = {
    "en": "The Anthropic account that pays for me has reached its spending limit, so I can't "
    "answer just now. I've kept what you said; ask again once the limit is raised or renewed.",
    "pt": "A conta da Anthropic que paga por mim chegou ao limite de gastos, então não "
    "consigo responder agora. Guardei o que você disse; pergunte de novo quando o limite for "
    "aumentado ou renovado.",
    "es": "La cuenta de Anthropic que me paga ha llegado a su límite de gasto, así que ahora no "
    "puedo responder. He guardado lo que has dicho; vuelve a preguntar cuando el límite se "
    "amplíe o se renueve.",
    "fr": "Le compte Anthropic qui me paie a atteint sa limite de dépenses, je ne peux donc pas "
    "répondre pour l'instant. J'ai gardé ce que vous avez dit ; redemandez une fois la limite "
    "relevée ou renouvelée.",
    "de": "Das Anthropic-Konto, das für mich bezahlt, hat sein Ausgabenlimit erreicht, daher "
    "kann ich gerade nicht antworten. Ich habe gespeichert, was Sie gesagt haben; fragen Sie "
    "erneut, sobald das Limit erhöht oder erneuert ist.",
    "it": "L'account Anthropic che mi paga ha raggiunto il suo limite di spesa, quindi ora non "
    "posso rispondere. Ho conservato quello che hai detto; richiedi quando il limite sarà "
    "alzato o rinnovato.",
    "nl": "Het Anthropic-account dat voor mij betaalt heeft zijn bestedingslimiet bereikt, dus ik "
    "kan nu niet antwoorden. Ik heb bewaard wat je zei; vraag het opnieuw zodra de limiet is "
    "verhoogd of vernieuwd.",
    "pl": "Konto Anthropic, które za mnie płaci, osiągnęło limit wydatków, więc nie mogę teraz "
    "odpowiedzieć. Zachowałam to, co napisałeś; zapytaj ponownie, gdy limit zostanie "
    "podniesiony lub odnowiony.",
    "tr": "Benim için ödeme yapan Anthropic hesabı harcama sınırına ulaştı, bu yüzden şu anda "
    "yanıt veremiyorum. Söylediklerinizi sakladım; sınır yükseltildiğinde ya da yenilendiğinde "
    "tekrar sorun.",
    "id": "Akun Anthropic yang membayar saya sudah mencapai batas pengeluarannya, jadi saya belum "
    "bisa menjawab sekarang. Saya sudah menyimpan yang Anda katakan; tanyakan lagi setelah "
    "batasnya dinaikkan atau diperbarui.",
    "vi": "Tài khoản Anthropic trả phí cho mình đã chạm giới hạn chi tiêu, nên lúc này mình chưa "
    "trả lời được. Mình đã lưu lại điều bạn nói; bạn hỏi lại khi giới hạn được nâng hoặc gia "
    "hạn nhé.",
    "ru": "Аккаунт Anthropic, который за меня платит, достиг лимита расходов, поэтому сейчас я "
    "не могу ответить. Я сохранила то, что вы сказали; спросите снова, когда лимит поднимут "
    "или обновят.",
    "ar": "بلغ حساب Anthropic الذي يدفع تكلفتي حدّ الإنفاق، لذلك لا أستطيع الرد الآن. حفظتُ ما "
    "قيل؛ يُرجى السؤال مجددًا بعد رفع الحد أو تجديده.",
    "hi": "मेरा ख़र्च उठाने वाला Anthropic खाता अपनी ख़र्च सीमा तक पहुँच गया है, इसलिए मैं अभी जवाब "
    "नहीं दे सकती। आपने जो कहा, वह मैंने सहेज लिया है; सीमा बढ़ने या नवीनीकृत होने पर फिर से "
    "पूछें।",
    "zh": "为我付费的 Anthropic 账户已达到支出上限，所以我现在没法回答。你说的话我已经保存好了；"
    "等上限提高或续期后再问我吧。",
    "ja": "私の費用を払っている Anthropic のアカウントが支出の上限に達したため、今はお答えできま"
    "せん。お話しいただいた内容は保存しました。上限が引き上げられるか更新されたら、もう一度"
    "聞いてください。",
    "ko": "저를 위해 비용을 내는 Anthropic 계정이 지출 한도에 도달해서 지금은 답할 수 없어요. "
    "말씀하신 내용은 저장해 두었어요. 한도가 올라가거나 갱신되면 다시 물어봐 주세요.",
}


def held_phrase(hold: Hold, language: str) -> str:
    return phrase(HELD[hold], language)


def state_phrase(key: str, ending: str, month_usd: float, language: str) -> str:
    return phrase(KEY_STATE[key], language).format(ending=ending, month=month_usd)


def not_kept_phrase(reason: str, language: str) -> str:
    return phrase(NOT_KEPT.get(reason, NOT_KEPT["unchecked"]), language)
