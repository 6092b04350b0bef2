"""Questions about what Violet told the person, told apart from questions about the person.

What Violet told (her answers, and work results as she told them) is kept as "told" records.
They answer "what time did you say the ferry leaves?" and never "what is my PIN?": a page Violet
read out may say anything, and none of it is a fact about the person. The memory service gives
told records only for a question these rules let through, whatever its caller asks, and the
offline model answers from them only a question that asks what Violet said. One set of rules
serves both, so the two never disagree.

Questions about what was told are read in English phrasings, and in common ones of each other
language Violet follows: Portuguese, Spanish, French, German, Italian, Dutch, Polish, Turkish,
Indonesian, Vietnamese, Russian, Arabic, Hindi, Chinese, Japanese and Korean. The person speaking
of themselves is read in each of them, so that a question about the person never gets told
records (the safe side).
"""

from __future__ import annotations

import re
import unicodedata

from violet.language import ENGLISH, detect

# What Violet does that a person later asks about: said, found, suggested, wrote, worked out.
_VIOLET_DID = (
    r"say|said|tell|told|mention|mentioned|suggest|suggested|recommend|recommended|find|found"
    r"|write|wrote|written|send|sent|read|look\s+up|looked\s+up|work\s+out|worked\s+out|give|gave"
    r"|show|showed|quote|quoted|pick|picked|propose|proposed|come\s+up\s+with|came\s+up\s+with"
    r"|make|made|get|got|plan|planned|book|booked|put"
)
# Things Violet looked up or made, named as such: "that page", "the note", "the weather site".
_VIOLET_MADE = (
    r"page|web\s*page|article|site|website|link|note|list|document|doc|search|results?"
    r"|answer|sum|calculation|email|e-mail"
)
# The same in the other languages Violet follows: "você disse", "dijiste", "vous avez dit",
# "haben Sie gesagt", "a página", "la nota", "die Seite".
_OTHER_LANGUAGES = (
    r"\b(?:você\s+)?(?:disse|falou|encontrou|sugeriu|recomendou|escreveu|enviou|mandou)\b"
    r"|\b(?:dijiste|encontraste|sugeriste|recomendaste|escribiste|enviaste|mandaste)\b"
    r"|\b(?:vous\s+)?(?:m'avez|avez)\s+(?:dit|trouvé|suggéré|recommandé|écrit|envoyé)\b"
    # Within one sentence, and a bounded reach: an open `.*` costs time squared on a long
    # message of "Sie haben".
    r"|\b(?:haben\s+Sie|Sie\s+haben)\b[^.?!\n]{0,120}?\b(?:gesagt|gefunden|empfohlen|vorgeschlagen"
    r"|geschrieben|geschickt)\b"
    r"|\b(?:a|na|da|la|esa|esta|cette|die|der|diese[rn]?)\s+(?:página|pagina|page|nota|note"
    r"|notiz|seite|artikel|artículo|artigo|article|liste|lista)\b"
)
# In the languages below a verb counts only in a form that says "you": a bare past form ("ha
# detto", "сказала", "قلت", "言った", "말한") may as well be the person's own words, or their
# doctor's, and a question about those is about the person.
# Italian: "mi hai consigliato", "me l'avevi detto"; "quella pagina", "l'articolo", "il sito".
# The formal "Lei ha detto" is left out: written small it is "she said".
_ITALIAN = (
    r"\b(?:hai|avevi)\s+(?:\w+\s+)?(?:detto|trovato|consigliato|raccomandato|suggerito|proposto"
    r"|scritto|mandato|inviato|scelto|calcolato|cercato|letto|dato|indicato|menzionato)\b"
    r"|\b(?:(?:il|nel|sul|quel|quello|questo|nella|sulla|quella|questa)\s+|(?:l|nell|sull|dell"
    r"|quell)['’])(?:pagina|nota|lista|elenco|articolo|link|sito|documento|ricerca)\b"
)
# Dutch: "heb je gezegd", "die je me hebt aangeraden", "wat zei je"; "die pagina", "het artikel".
# Not after "ik": "wat ik je had verteld" is the person's words.
_DUTCH = (
    r"\b(?:(?:heb|hebt|had)\s+(?:je|jij|u)|(?<!\bik\s)(?:je|jij|u)\s+(?:me\s+|mij\s+|ons\s+)?"
    r"(?:hebt|had|heeft))\b[^.?!]{0,80}\b(?:gezegd|verteld|gevonden|aanbevolen|aangeraden|voorgesteld"
    r"|geschreven|gestuurd|gekozen|uitgerekend|berekend|opgezocht|genoemd|gegeven|gelezen)\b"
    r"|\b(?:(?:zei|vertelde|vond|noemde|schreef|stuurde|koos|raadde|stelde|gaf)\s+(?:je|jij|u)"
    r"|(?<!\bik\s)(?:je|jij|u)\s+(?:me\s+|mij\s+|ons\s+)?(?:zei|vertelde|vond|noemde|schreef"
    r"|stuurde|koos|raadde|stelde|gaf))\b"
    r"|\b(?:de|het|die|deze|dat)\s+(?:pagina|webpagina|site|website|artikel|link|notitie|lijst"
    r"|lijstje|document|zoekresultaten)\b"
)
# Polish: the past forms that say "you" ("powiedziałaś", "poleciłeś"), the polite "Pani
# powiedziała"; "ta strona", "w tym artykule", "na tej liście".
_POLISH_DID = (
    r"(?:powiedział|mówił|wspomniał|znalazł|polecił|poradził|doradził|zaproponował|zasugerował"
    r"|sugerował|napisał|wysłał|przesłał|wybrał|policzył|obliczył|wyliczył|podał|sprawdził"
    r"|wyszukał|przeczytał|dał)"
)
_POLISH = (
    rf"\b{_POLISH_DID}(?:aś|eś)\b|\bPani\s+(?:mi\s+)?{_POLISH_DID}a\b"
    r"|\b(?:ta|tę|tą|tej|ten|tym|tego|tamta|tamtej|tamten|tamtym)\s+(?:stron\w*|artykuł\w*"
    r"|notat\w*|list[aęyi]|liście|link(?:u|iem)?|witryn\w*|wynik\w*|dokument\w*)\b"
)
# Turkish: "dedin", "önerdiğin restoran", "bulduğunuz", "tavsiye ettiniz"; "o sayfada", "bu
# makale". Endings that say "I" ("dedim", "dediğim") are not among them.
_TURKISH = (
    r"\b(?:(?:de|söyle|öner|gönder|ilet|göster)d|(?:bahset|et|seç)t)(?:in|iniz|iğin|iğiniz)\b"
    r"|\b(?:(?:yaz|yolla|hesapla|hazırla|ayarla)d|(?:anlat|bak)t)(?:ın|ınız|ığın|ığınız)\b"
    r"|\b(?:bul|oku)d(?:un|unuz|uğun|uğunuz)\b"
    r"|\b(?:o|bu|şu)\s+(?:sayfa|makale|not|liste|bağlantı|link|site|web\s+sitesi|belge)"
    r"(?:da|de|ta|te|dan|den|yı|yi|yu|u|ı|i|sı|si|ya|ye|nın|nin)?\b"
)
# Indonesian: "kamu bilang", "yang Anda rekomendasikan", "katamu"; "halaman itu", "artikel tadi".
# Verbs of doing ("tulis", "kirim") count after "yang kamu" or a word saying it was done: alone
# they ask for it to be done.
_ID_YOU = r"(?:kamu|kau|anda|engkau|lu|lo|elo)"
_INDONESIAN = (
    rf"\b{_ID_YOU}\s+(?:(?:tadi|kemarin|sudah|udah|pernah|barusan|sebelumnya)\s+)?(?:bilang"
    r"|katakan|sebut|sebutkan|ceritakan|sarankan|rekomendasikan|usulkan|temukan)\b"
    rf"|\b(?:yang\s+{_ID_YOU}|{_ID_YOU}\s+(?:tadi|kemarin|sudah|udah|pernah|barusan))\s+(?:\w+\s+)?"
    r"(?:tulis|tuliskan|kirim|kirimkan|pilih|pilihkan|hitung|cari|carikan|berikan|kasih|baca"
    r"|dapat|dapatkan|buat|buatkan)\b"
    r"|\b(?:katamu|saranmu|rekomendasimu|kaubilang)\b"
    r"|\b(?:halaman|artikel|catatan|daftar|tautan|link|situs|website|dokumen)\s+(?:itu|ini|tadi"
    r"|tersebut)\b"
)
# Vietnamese: "bạn đã nói", "nhà hàng bạn gợi ý cho tôi", "cái link mà bạn gửi"; "trang đó".
# Only "bạn" and "cậu" say "you" for sure: "em", "chị" and "cô" are as often "I". Verbs of doing
# ("viết", "gửi") count when said to be done, as in Indonesian.
_VIETNAMESE = (
    r"\b(?:bạn|cậu)\s+(?:(?:đã|vừa|mới|có|từng|lúc\s+nãy|hồi\s+nãy|hôm\s+qua)\s+)*(?:nói|bảo|kể"
    r"|nhắc|gợi\s+ý|đề\s+xuất|đề\s+nghị|giới\s+thiệu|khuyên|tìm\s+(?:thấy|được|ra)|tính\s+ra)\b"
    r"|\b(?:mà\s+(?:bạn|cậu)|(?:bạn|cậu)\s+(?:đã|vừa|mới|từng|lúc\s+nãy|hồi\s+nãy|hôm\s+qua))"
    r"\s+(?:viết|gửi|chọn|đọc|tính|tìm|đưa)\b"
    r"|\b(?:trang(?:\s+web)?|bài\s+(?:báo|viết)|ghi\s+chú|danh\s+sách|đường\s+link|link"
    r"|liên\s+kết|tài\s+liệu)\s+(?:đó|đấy|ấy|này|kia|lúc\s+nãy|hồi\s+nãy)\b"
)
# Russian: "ты сказала", "вы мне посоветовали", "что ты нашла"; "на той странице", "в этой
# статье". A past form alone says no person ("я сказала" is as good), so "ты" or "вы" comes
# before it, with no "я" between ("ты помнишь, что я сказал").
_RUSSIAN = (
    r"\b(?:ты|вы)\s+(?:(?!я\b)\w+\s+){0,2}?(?:сказал|говорил|упомянул|называл|назвал|нашёл|нашел"
    r"|нашл|находил|посоветовал|советовал|порекомендовал|рекомендовал|предложил|предлагал"
    r"|написал|прислал|присылал|отправил|скинул|выбрал|подобрал|посчитал|подсчитал|рассчитал"
    r"|показал|дал|давал|прочитал|читал)(?:а|и)?\b"
    r"|\b(?:эт(?:а|у|ой|от|ом|и|их)|т(?:а|у|ой|от|ом|е|ех))\s+(?:страниц|стать|заметк|заметок"
    r"|спис|ссылк|сайт|документ|результат)\w*"
)
# Arabic: unwritten vowels leave "قلت" "I said" or "you said", and "كتبت" "she wrote" too, so a
# form counts that can only be "you": with the vowel written ("قلتِ", "قلتَ"), the feminine or
# plural ending ("قلتي", "قلتم"), or after "أنت"; and for the verbs whose "she" form is spelled
# apart ("قالت", "أعطت"), with "me" or "us" on it ("قلت لي", "أعطيتني"). "كتبت لي" stays out: it
# is as often "my sister wrote to me". And "تلك الصفحة", "في المقال", "الرابط الذي".
_ARABIC_THINGS = (
    r"(?:صفح[ةه]|مقال[ةه]?|ملاحظ[ةه]|قائم[ةه]|قايم[ةه]|رابط|لينك|موقع|مستند|وثيق[ةه]|نتائج)"
)
_ARABIC_DID = (
    r"[وف]?(?:قل|اختر|أعطي|اعطي|بع|أوصي|اوصي|ذكر|أخبر|اخبر|اقترح|نصح|وجد|لقي|كتب|أرسل|ارسل|بعث"
    r"|حسب|قرأ|قرا|رشح)ت"
)
_ARABIC = (
    rf"(?<!\w){_ARABIC_DID}(?:[\u064e\u0650]|م|ي)"
    rf"|(?<!\w)(?:أنت|انت|أنتِ|انتي|أنتي|أنتم|انتم|حضرتك)\s+(?:\w+\s+)?{_ARABIC_DID}"
    r"|(?<!\w)[وف]?(?:قل|اختر|أعطي|اعطي|بع|أوصي|اوصي)ت(?:ني|نا|(?:ه|ها)?\s*(?:لي|لنا|علي"
    r"|علينا))(?!\w)"
    rf"|(?<!\w)(?:تلك|هذه|ذلك|هذا|هذي|هاي|هاد|في|على|ب)\s*ال{_ARABIC_THINGS}"
    rf"|(?<!\w)ال{_ARABIC_THINGS}\s+(?:الذي|التي|اللي|الي)(?!\w)"
)
# Devanagari vowel signs are no word characters to `re`, so Hindi words are bounded by hand.
_DEVANAGARI = "\u0900-\u097f"
# Hindi: "आपने बताया", "तुमने मुझे जो सुझाया", "तुम बोली थी"; "उस पेज पर", "इस लेख में".
# "ने" marks who did it; "तुमसे", "तुम को" are "to you" ("मैंने तुम को बताया था").
_HINDI = (
    rf"(?<![{_DEVANAGARI}])(?:तुमने|आपने|तूने)\s+(?:(?!मैं|मैने)\S+\s+){{0,4}}?(?:कह|बता|ढूंढ"
    r"|ढूँढ|खोज|सुझा|सिफारिश|सिफ़ारिश|रिकमेंड|लिख|भेज|चुन|गिन|हिसाब|निकाल|पढ़|दिखा|दि|दी|बोल)"
    rf"|(?<![{_DEVANAGARI}])(?:तुम|आप|तू)\s+(?:(?!से|को)\S+\s+)?(?:बोल|कह|बता)\S*\s+"
    r"(?:रही\s+|रहे\s+|रहा\s+)?(?:थी|थे|थीं|था)"
    rf"|(?<![{_DEVANAGARI}])(?:उस|इस|वह|वो|यह|ये)\s+(?:वेब\s*)?(?:पेज|पन्न|पृष्ठ|लेख|आर्टिकल|नोट"
    r"|सूची|लिस्ट|लिंक|साइट|वेबसाइट|दस्तावेज|डॉक्यूमेंट)"
)
# Chinese (Simplified): "你说过", "你给我推荐的", "您刚才查到的"; "那个网页", "这篇文章". "你"
# after "跟", "对", "给", "告诉", "问" is "you" spoken to ("我跟你说过"), and a verb counts done
# ("的", "过", "了") or after a time ("你刚才说"): "你帮我写" asks for it to be done.
_CHINESE = (
    r"(?<![跟和对给向同诉让叫问])[你您]们?(?:(?:之前|刚才|刚刚|上次|昨天|前天|早上|上午|下午"
    r"|晚上|以前|那天|曾经|已经)(?:给我|跟我|对我|帮我|为我|和我|向我|替我)?(?:说|讲|提|告诉"
    r"|推荐|建议|介绍|找|查|搜|写|发|寄|选|挑|算|给|读|念)"
    r"|(?:给我|跟我|对我|帮我|为我|和我|向我|替我)?(?:说|讲|提|告诉我|告诉|推荐|建议|介绍|找|查|搜"
    r"|写|发|寄|选|挑|算|给我|给|读|念)(?:给我|到|出来|出|完|好)?[的过了])"
    r"|(?<![我的])[那这](?:个|篇|张|份|条|些|页|家)?(?:网页|页面|文章|网站|链接|笔记|清单|列表"
    r"|文件|文档|搜索结果|备忘录)"
)
# Japanese: "教えてくれた", "おすすめしてくれた", "調べてくださった", "おっしゃった",
# "あなたが言った"; "そのページ", "あの記事". What was done "for me" (くれた) is never the
# person's own deed, but may be another's ("母が教えてくれた"): it counts with no one else
# named doing it ("が") in its clause. A bare "言った" counts after "あなた".
_JA_VIOLET = r"(?:あなた|君|きみ|バイオレット|violet)"
_JAPANESE = (
    rf"(?:^|[\s、。,.!?！？]|{_JA_VIOLET}[がは])[^が\s、。,.!?！？]*?(?:[てで](?:くれた|くれました"
    r"|くれてた|くれていた|くださった|くださいました|下さった|下さいました)|おっしゃ(?:った|ってた"
    r"|っていた|いました))"
    rf"|{_JA_VIOLET}(?:が|は|って|も)[^が。、？?！!]*?(?:言った|言ってた|言っていた|言いました"
    r"|言ってました|見つけた|調べた|勧めた|すすめた|薦めた|おすすめした|推薦した|提案した|書いた"
    r"|送った|選んだ|計算した|教えた|探した)"
    r"|(?:その|あの|この|さっきの)(?:ページ|ウェブページ|記事|サイト|ウェブサイト|リンク|メモ|リスト"
    r"|一覧|資料|検索結果)"
)
# Korean: "추천해준", "알려주신", "말씀하신", "네가 말한"; "그 페이지", "그 기사". What was
# done "for me" (해준) may be the person's own deed ("제가 알려준 비밀번호") or another's
# ("엄마가 추천해준"): it counts with no one named doing it (a word ending in 이, 가, 은, 는, or
# "난", "내", "우리"...) before it in its sentence but Violet ("네가", "당신이"), and "저한테"
# ("to me") may stand there. A bare "말한" counts after "네가".
_KO_VIOLET = r"(?:네가|니가|너가|너는|넌|당신이|당신은|바이올렛이|바이올렛은|violet이|violet은)"
_KOREAN = (
    rf"(?:^|[.?!,]\s*)(?:{_KO_VIOLET}\s+|(?![가-힣]*[이가은는]\s|(?:난|전|내|제|우리|저희)\s)"
    r"\S+\s+)*?(?:(?:(?:추천|소개|제안|말|얘기|이야기|계산|정리|검색|예약|설명)\s?해|알려|찾아|보내"
    r"|써|골라|적어|뽑아|만들어|구해|읽어|보여|가르쳐)\s?(?:준|줬|주신|주셨|주었)|말씀\s?(?:하신|하셨"
    r"|해\s?주)|(?:추천|소개|제안)\s?(?:하신|하셨))"
    rf"|{_KO_VIOLET}\s+(?:(?!내가|제가|나는|저는|난\s|전\s)\S+\s+){{0,2}}?(?:말한|말했|추천한|추천했"
    r"|찾은|찾았|보낸|보냈|쓴|썼|고른|골랐|계산한|계산했|제안한|제안했|소개한|소개했)"
    r"|(?<!\S)(?:그|이|저)\s?(?:페이지|웹페이지|기사|사이트|웹사이트|링크|메모|목록|리스트|문서"
    r"|검색\s?결과)"
)
# In two parts: a text in ASCII alone (most English) is only searched with the first, since no
# pattern of the second can match it, and with both it would take eight times as long.
_TOLD_IN_LATIN = re.compile(
    rf"\byou(?:'ve|'d|\s+have|\s+had)?\s+(?:\w+\s+)?(?:{_VIOLET_DID})\b"
    rf"|\b(?:that|the|this|those|these)\s+(?:[\w-]+\s+)?(?:{_VIOLET_MADE})\b"
    rf"|{_OTHER_LANGUAGES}|{_ITALIAN}|{_DUTCH}|{_POLISH}|{_TURKISH}|{_INDONESIAN}|{_VIETNAMESE}",
    re.IGNORECASE,
)
_TOLD_IN_OTHER_SCRIPTS = re.compile(
    rf"{_RUSSIAN}|{_ARABIC}|{_HINDI}|{_CHINESE}|{_JAPANESE}|{_KOREAN}", re.IGNORECASE
)
# The person speaking of themselves, in each language Violet follows. "me" is left out:
# "remind me", "tell me" ask for something. In the other languages "me" counts ("мне", "给我",
# "저한테"): a question about what was told is let through before these (`about_the_person`),
# and there no question gets told records for being a question alone. Words English writes too
# ("ho", "gw", "tao") are left out, so an English question is not taken for one about the person.
_FIRST_PERSON_IN_LATIN = re.compile(
    r"\b(?:my|mine|myself|i|i'm|i've|i'd|i'll|im"
    r"|eu|meu|minha|meus|minhas|yo|mi|mis|je|mon|ma|mes|ich|mein|meine|meinen|meinem|meiner"
    # Italian, Dutch, Polish
    r"|io|mio|mia|miei|mie|ik|mijn|m['’]n|mij|mezelf|ja|mój|moja|moje|moi|mojego|mojej|moją"
    r"|moim|moimi|moich|mojemu|mnie|mam|jestem|byłem|byłam|mieszkam|pracuję"
    # Turkish: "ben", "benim", and the endings that say "I" or "my": "çalışıyorum",
    # "hastalandım", "adım", "şifrem", "doğum günüm".
    r"|ben|benim|bana|beni|bende|benden|\w+yorum|\w+[dt][ıü]m|\w+m[ıiuü]y[ıiuü]m"
    r"|(?:(?:ad|adres|telefon|doğum\s+gün|eş|doktor|ev|hesab|iş|okul)[ıiuü]|şifre|numara|anne"
    r"|baba|araba|randevu)m\w*"
    # Indonesian, with "-ku" ("namaku", "rumahku"); Vietnamese
    r"|saya|aku|gue|gua|\w{3,}ku|tôi|mình|tớ)"
    r"(?!\w)|\bj'",
    re.IGNORECASE,
)
_FIRST_PERSON_IN_OTHER_SCRIPTS = re.compile(
    # Russian
    r"(?<!\w)(?:я|меня|мне|мной|мой|моя|моё|мое|мои|моего|моей|моему|моим|моих|моём|моем|мою)"
    r"(?!\w)"
    # Arabic: "أنا", "لي", "عندي", and the things the person names theirs ("اسمي", "عنواني")
    # or does in the first person ("أسكن"); not every word that ends in "ي".
    r"|(?<!\w)[وفبل]?(?:أنا|انا|لي|عندي|لدي|بي|نحن|اسمي|عنواني|رقمي|هاتفي|جوالي|موبايلي|تلفوني"
    r"|بريدي|ايميلي|إيميلي|حسابي|سري|أمي|امي|أبي|ابي|والدي|والدتي|زوجي|زوجتي|ابني|ابنتي|بنتي|أخي"
    r"|اخي|أختي|اختي|صديقي|صديقتي|طبيبي|دكتوري|موعدي|مواعيدي|عملي|شغلي|وظيفتي|راتبي|بيتي|منزلي"
    r"|سيارتي|ميلادي|مدرستي|جامعتي|عائلتي|أسكن|اسكن|أعمل|اعمل|أعيش|اعيش)(?!\w)"
    # Hindi
    rf"|(?<![{_DEVANAGARI}])(?:मैं|मै|मैंने|मैने|मुझे|मुझको|मुझसे|मेरा|मेरी|मेरे|हम|हमें|हमारा|हमारी"
    rf"|हमारे)(?![{_DEVANAGARI}])"
    # Chinese and Japanese, written without spaces: characters that are "I" wherever they stand
    r"|[我咱俺]|本人|私|わたし|あたし|僕|ぼく|自分"
    # Korean: whole words only, 저 and 제 stand in many others ("저녁", "제일", "주제")
    r"|(?<!\S)(?:나|나는|난|내가|나의|나를|날|나도|나한테|나에게|내|내꺼|내거|저는|전|제가|저의|저를"
    r"|저도|저한테|저에게|제|우리|우리의|우리가|저희|저희가|저희의)(?=[\s.,?!]|$)",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"\?\s*$|^\s*(?:what|which|when|where|who|whose|why|how|is|are|was|were|do|does|did|can"
    r"|could|remind\s+me)\b",
    re.IGNORECASE,
)


def asks_what_was_told(text: str) -> bool:
    """Whether the words ask about something Violet said, found or made."""
    return _found(_TOLD_IN_LATIN, _TOLD_IN_OTHER_SCRIPTS, text)


def about_the_person(text: str) -> bool:
    """Whether the words speak of the person (their things, their doings) and not of what
    Violet told: told records never answer these."""
    return _speaks_of_themselves(text) and not asks_what_was_told(text)


def may_recall_told(text: str) -> bool:
    """Whether told records may be recalled for these words: words that ask about what Violet
    said, or an English question that is not about the person. In the other languages only the
    first: a question about the person there may name no word of theirs ("¿Dónde vivo?")."""
    if asks_what_was_told(text):
        return True
    if _speaks_of_themselves(text):
        return False
    return detect([text]) == ENGLISH and _QUESTION.search(text.strip()) is not None


def _speaks_of_themselves(text: str) -> bool:
    return _found(_FIRST_PERSON_IN_LATIN, _FIRST_PERSON_IN_OTHER_SCRIPTS, text)


def _found(in_latin: re.Pattern[str], in_other_scripts: re.Pattern[str], text: str) -> bool:
    if text.isascii():
        return in_latin.search(text) is not None
    composed = _composed(text)
    return bool(in_latin.search(composed) or in_other_scripts.search(composed))


def _composed(text: str) -> str:
    """The words with each letter and its marks written as one character, as the patterns are:
    some keyboards write Vietnamese tones or Hangul syllables apart, and a mark apart is no word
    character."""
    return unicodedata.normalize("NFC", text)
