"""The language a person writes in, told from their own recent messages.

Violet's fixed phrases and activity lines follow it. The detector is small and deterministic,
and it looks at the script first, then at the words:

- Letters of a script that only one of the languages writes tell that language: Hangul is
  Korean; kana is Japanese, with or without the Han characters Japanese writes among it; Han
  characters without kana are Chinese; Arabic script is Arabic, Cyrillic Russian, Devanagari
  Hindi. A message written mostly in one of these scripts is that language, whatever Latin words
  it holds (a brand, a place, a name).
- In Latin script, each word that is a common word of a language (articles, pronouns,
  prepositions, everyday verbs, greetings, time words) counts for that language, and letters
  only some of the languages write (ã, ñ, ß, è, ł, ş, ơ...) count for those.

In Latin script only about every other word tells; in the other scripts every word does, so
their words count for less, about as much as the English words they would translate, and a
message weighs about the same in any language. The newest message counts twice, so a person
who changes language is followed at once. With no evidence at all, English.

How Violet addresses a person, in every fixed phrase of every service: formally in French,
German, Russian, Turkish, Indonesian, Hindi, Japanese and Korean (vous, Sie, вы, siz, Anda, आप,
です/ます, 해요체); as a friend would in Portuguese, Spanish, Italian, Dutch, Polish, Vietnamese and
Chinese (você, tú, tu, je, ty, bạn with Violet saying mình, 你); in Modern Standard Arabic worded
so that it needs no guess at the person's gender. Violet is a woman: where a language marks the
speaker's gender (Italian and French adjectives and participles, Polish and Russian past
tenses, Hindi verbs, Arabic adjectives) she speaks of herself in the feminine.

Chosen over langdetect (a port of a character n-gram model, accurate on paragraphs but often
wrong on the short chat messages Violet gets, random unless seeded, and slower) and lingua
(accurate, but a 96 MB wheel in every image). The figures on held-aside sentences are in
docs/conversation.md.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")

ENGLISH = "en"
# The Latin-script languages first, then those with a script of their own.
LANGUAGES = (
    *(ENGLISH, "pt", "es", "fr", "de", "it", "nl", "pl", "tr", "id", "vi"),
    *("ru", "ar", "hi", "zh", "ja", "ko"),
)
# Written right to left: what shows Violet's words in them sets the text's direction by this.
RIGHT_TO_LEFT = frozenset({"ar"})
# Messages looked at, newest last; older ones say little about how the person writes now.
RECENT_MESSAGES = 5

# The letters of each script, with the vowel signs and marks written on them, as explicit
# code-point ranges of its Unicode blocks, leaving out the digits and punctuation some blocks
# hold: `unicodedata` tells a character's category but not its script.
_SCRIPT_LETTERS = {
    "latin": "a-zA-Z\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0300-\u036f\u1e00-\u1eff",
    "hangul": "\u1100-\u11ff\u3131-\u318e\ua960-\ua97c\uac00-\ud7a3\ud7b0-\ud7fb",
    "kana": "\u3041-\u3096\u3099\u309a\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
    "\uff66-\uff9f",
    "han": "\u3005\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f",
    "arabic": "\u0610-\u061a\u0620-\u065f\u066e-\u06d3\u06d5-\u06dc\u06df-\u06e8\u06ea-\u06ef"
    "\u06fa-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdfb\ufe70-\ufefc",
    "cyrillic": "\u0400-\u0481\u048a-\u052f\u1c80-\u1c88\u2de0-\u2dff\ua640-\ua66e\ua680-\ua69f",
    "devanagari": "\u0900-\u0963\u0971-\u097f\ua8e0-\ua8ff",
}
_SCRIPT_RUN = re.compile(
    "|".join(f"(?P<{name}>[{set_}]+)" for name, set_ in _SCRIPT_LETTERS.items())
)
# Scripts written with spaces between words, and the one language among LANGUAGES each tells.
_SPACED_SCRIPTS = {"hangul": "ko", "arabic": "ar", "cyrillic": "ru", "devanagari": "hi"}
# How many words of a language (characters, for Chinese and Japanese, which leave no space
# between words) count as much as one common word of the Latin-script languages, where only about
# every other word is one. A Korean, Russian or Arabic word holds the particles and prepositions
# English writes apart; a Chinese character is about an English word; Japanese spells more of its
# words in kana, so takes more characters.
_UNITS_A_POINT = {"ko": 1.25, "ru": 1.6, "ar": 1.6, "hi": 2.0, "zh": 2.5, "ja": 4.0}

_COMMON_WORDS = {
    "en": """
        the a an and or but is are was were be been am i you he she it we they my your his her
        our their me him us them this that these those what which who how when where why do
        does did have has had will would can could should of to in on at for with from by
        about not no yes please thanks thank hi hello hey just some any there here if so up out
        today tomorrow look find write send check note list email remember like need want know
        tell show get let make good morning evening weather
    """,
    "pt": """
        o os as um uma uns umas e é ou mas do da dos das em no na nos nas para pra por com sem
        não sim eu você vocês ele ela nós eles elas meu minha meus minhas seu sua isso isto esse
        essa este esta aquele como quando onde porque qual quem está estou estão são foi ser tem
        tenho ter vai vou pode obrigado obrigada olá oi tudo bem hoje amanhã mais muito também
        já ao à lembra lembre procure procura escreva envie mande preciso quero faz fazer dia
        sobre nota lista amanhã tempo bom boa
    """,
    "es": """
        el la los las un una unos unas y o pero es son está estoy están de del al en para por
        con sin que qué no sí yo tú usted él ella nosotros ellos mi mis tu tus su sus esto eso
        este esta ese esa cómo cuándo cuando dónde donde porque cuál quién hay tengo tiene
        puedes puede gracias hola hoy mañana más muy también ya me te se lo le les busca
        escribe envía manda necesito quiero hacer día bien sobre nota lista tiempo buenos buenas
    """,
    "fr": """
        le la les un une des et ou mais est sont suis être de du au aux en dans pour par avec
        sans sur que qui quoi ne pas non oui je j tu il elle nous vous ils elles mon ma mes ton
        ta tes son sa ses votre vos notre nos ce cette ces c ça comment quand où pourquoi quel
        quelle qu ai avez avons peux peut pouvez merci bonjour salut aujourd hui demain plus
        très aussi déjà me te se lui leur cherche écris envoie besoin veux voudrais faire jour
        bien n y note liste temps
    """,
    "de": """
        der die das den dem des ein eine einen einem einer und oder aber ist sind bin bist war
        sein von vom zu zum zur in im auf für mit ohne an am bei nach aus dass was wer wie wann
        wo warum welche nicht nein ja kein keine ich du er sie es wir ihr mein meine dein deine
        ihre unser mir mich dir dich uns euch ihnen habe hast hat haben kann kannst können bitte
        danke hallo heute morgen mehr sehr auch schon noch such suche schreib schreibe schick
        sende brauche möchte will machen tag gut guten wetter notiz liste über dank vielen
    """,
    # The lists below leave out words another language writes alike and uses more ("posso",
    # "sempre" and "cerca" in Portuguese or Spanish, "i", "my", "go", "ty", "even" and "later"
    # in English, "alle" and "hier" in German, "em" and "ai" in Portuguese and French), Dutch
    # "in" and "was", which English and German write too and so could only tip a message of a
    # third language to Dutch, and common English given names (Ben, Dan, Kim, Mia): a message of
    # a name alone stays English.
    "it": """
        il lo la gli le un uno una e è ed o ma di del dello della dei degli delle da dal dalla dai
        in nel nella nei con su sul sulla per tra fra che chi cosa come quando dove perché quale
        quanto non sì io tu lui lei noi voi loro mi ti ci vi si mio miei tuo tua suo questo questa
        questi quello quella sono siamo ho hai abbiamo avete hanno essere avere fare fai faccio puoi
        può voglio vuoi vorrei grazie ciao buongiorno buonasera buonanotte salve oggi domani ieri
        adesso ora dopo molto più anche già ancora bene tutto tutti ricordami ricorda cercami trova
        trovami scrivi mandami invia dimmi mostrami dammi giorno giorni mattina settimana favore
        alla qui qua ecco
    """,
    "nl": """
        de het een en of maar is zijn bent waren van voor met op aan bij naar uit over door om te
        tot dat die dit deze wat wie hoe wanneer waar waarom welke niet geen nee ja ik jij je hij
        zij ze wij we jullie mijn jouw jou hem haar ons onze hun mij me kan kun kunt kunnen wil wilt
        moet moeten heb hebt heeft hebben zal zou doe doen maak maken graag alsjeblieft alstublieft
        dank bedankt dankjewel hallo hoi goedemorgen goedenavond welterusten vandaag morgen gisteren
        nu straks ook al nog heel erg veel meer zoek stuur schrijf herinner vertel geef dag weer
        lijst lijstje notitie tijd goed er daar
    """,
    "pl": """
        w z na nie tak jest są być jestem jesteś się że co kto jak kiedy gdzie dlaczego czemu który
        która które mój moja moje twój twoja jego jej nasz nasza ja ona wy oni mnie mi cię ciebie
        mu nam wam ta te tego tej czy ale lub albo o od po przez dla przy bez za pod nad mam masz ma
        mamy możesz może mogę chcę chciałbym chciałabym muszę proszę dziękuję dzięki cześć dzień
        dobry dobranoc dziś dzisiaj jutro wczoraj teraz potem już jeszcze bardzo też także dużo
        więcej znajdź napisz wyślij przypomnij pokaż powiedz sprawdź notatka pogoda tydzień rano
        wieczorem
    """,
    "tr": """
        bir ve ile bu şu bunu şunu sen biz siz onlar benim senin onun bizim sizin bana sana beni
        seni ne nasıl neden niye nerede nereye hangi kaç mı mi mu mü misin mısın musun müsün için
        gibi kadar var yok evet hayır değil ki çok daha ama veya merhaba selam günaydın iyi akşamlar
        geceler teşekkürler teşekkür ederim sağol lütfen bugün yarın dün şimdi sonra önce gün hafta
        sabah akşam bul yaz gönder hatırlat göster söyle yap hava tamam şey lazım istiyorum
    """,
    "id": """
        yang di ke dari untuk dengan ini itu ada tidak nggak gak enggak bukan apa siapa bagaimana
        gimana kapan mana kenapa mengapa berapa saya aku kamu anda dia kami kita mereka mau ingin
        bisa boleh harus sudah udah belum akan sedang lagi juga saja aja sangat banget lebih tolong
        terima kasih makasih halo selamat pagi siang sore malam hari besok kemarin sekarang nanti
        minggu cari carikan tulis kirim ingatkan tunjukkan buat buatkan daftar catatan cuaca baik ya
        dong deh kok atau tapi karena kalau jangan punya bantu jam bulan tahun
    """,
    # The words of Vietnamese are its syllables. Those with a letter only Vietnamese writes
    # (được, của, đã...) count through that letter and are not listed again, or a Vietnamese
    # message would weigh twice as much as another; "khong" and "duoc" are how people who leave
    # out the marks write two of them.
    "vi": """
        tôi mình anh nó chúng và cho trong trên là có không này kia gì sao nào khi bao nhiêu vì cái
        các hãy giúp tìm xem nói xin chào hôm nay ngày mai qua bây sau làm nhé nhe vâng danh sách
        ghi chú sáng khong duoc
    """,
}
COMMON_WORDS = {language: frozenset(words.split()) for language, words in _COMMON_WORDS.items()}
# The languages each common word counts for: one lookup a word instead of one a language.
_LANGUAGES_OF_WORD: dict[str, tuple[str, ...]] = {
    word: tuple(language for language in LANGUAGES if word in COMMON_WORDS.get(language, ()))
    for word in frozenset().union(*COMMON_WORDS.values())
}
# Letters that only some of the languages write, and how much one counts for each.
_LETTER_WEIGHTS = {
    "ã": {"pt": 2},
    "õ": {"pt": 2},
    "ê": {"pt": 1, "fr": 1},
    "ç": {"pt": 1, "fr": 1, "tr": 1},
    "ñ": {"es": 2},
    "¿": {"es": 2},
    "¡": {"es": 2},
    "è": {"fr": 2, "it": 1},
    "à": {"fr": 1, "pt": 1, "it": 1},
    "ù": {"fr": 2, "it": 1},
    "û": {"fr": 2},
    "î": {"fr": 2},
    "œ": {"fr": 2},
    "ì": {"it": 2},
    "ò": {"it": 2},
    "ä": {"de": 2},
    # As much for Turkish as for German, or a Turkish message full of them would read German.
    "ö": {"de": 2, "tr": 2},
    "ü": {"de": 2, "tr": 2},
    "ß": {"de": 2},
    # Polish and Turkish write theirs in most words, so one counts less.
    **dict.fromkeys("ąćęłńśźż", {"pl": 1}),
    **dict.fromkeys("ğış", {"tr": 1}),
    # The dot lowering the Turkish capital İ leaves after the "i"; words are read without it.
    "\u0307": {"tr": 1},
}
_WORD = re.compile(r"[^\W\d_]+")
# Letters only Vietnamese writes. They mark nearly every syllable, often twice ("được"), so a
# syllable counts once however many it has, and less than a letter of _LETTER_WEIGHTS.
_VIETNAMESE_LETTERS = "ăđơưĩũạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ"
_VIETNAMESE_LETTER = re.compile(f"[{_VIETNAMESE_LETTERS}]")
_MARKED_LETTER = re.compile(f"[{''.join(_LETTER_WEIGHTS)}]")


def scores(text: str) -> dict[str, int]:
    """How much `text` looks like each language."""
    tally = dict.fromkeys(LANGUAGES, 0)
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
        if not _add_script_scores(text, tally):
            return tally
    _add_latin_scores(text.lower(), tally)
    return tally


def _add_script_scores(text: str, tally: dict[str, int]) -> bool:
    """Add what the scripts other than Latin tell; return whether the Latin letters are at least
    as many as those of any one of them, so that the Latin words count too."""
    letters = dict.fromkeys(_SCRIPT_LETTERS, 0)
    words = dict.fromkeys(_SCRIPT_LETTERS, 0)
    for run in _SCRIPT_RUN.finditer(text):
        script = run.lastgroup or "latin"
        letters[script] += len(run.group())
        words[script] += 1
    for script, language in _SPACED_SCRIPTS.items():
        tally[language] += _points(language, words[script])
    characters = letters["han"] + letters["kana"]
    chinese_or_japanese = "ja" if letters["kana"] else "zh"
    tally[chinese_or_japanese] += _points(chinese_or_japanese, characters)
    # Latin words in a message written mostly in another script are names, not its language.
    return letters["latin"] >= max(characters, *(letters[script] for script in _SPACED_SCRIPTS))


def _points(language: str, units: int) -> int:
    return math.ceil(units / _UNITS_A_POINT[language])


def _add_latin_scores(lowered: str, tally: dict[str, int]) -> None:
    for word in _WORD.findall(lowered.replace("\u0307", "")):
        for language in _LANGUAGES_OF_WORD.get(word, ()):
            tally[language] += 1
        if not word.isascii() and _VIETNAMESE_LETTER.search(word):
            tally["vi"] += 1
    for letter in _MARKED_LETTER.findall(lowered):
        for language, weight in _LETTER_WEIGHTS[letter].items():
            tally[language] += weight


def detect(messages: Sequence[str], default: str = ENGLISH) -> str:
    """The language of the person's recent `messages` (oldest first); `default` when nothing
    in them tells. A tie goes to the language listed first in LANGUAGES."""
    recent = [message for message in messages if message.strip()][-RECENT_MESSAGES:]
    tally = dict.fromkeys(LANGUAGES, 0)
    for position, message in enumerate(recent):
        weight = 2 if position == len(recent) - 1 else 1
        for language, score in scores(message).items():
            tally[language] += weight * score
    best = max(LANGUAGES, key=lambda language: tally[language])
    return best if tally[best] > 0 else default


def phrase(translations: Mapping[str, T], language: str) -> T:
    """The phrase in `language`, or in English when it has no translation."""
    return translations.get(language) or translations[ENGLISH]
