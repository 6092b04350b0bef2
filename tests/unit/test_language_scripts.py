"""The detector reads the script first, then the words: each script language from one message,
messages that mix scripts, a person switching language between messages, and the Latin-script
languages told apart by their common words and marked letters."""

from __future__ import annotations

import unicodedata

import pytest

from violet.language import LANGUAGES, RIGHT_TO_LEFT, detect, scores


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("ko", "내일 아침 8시에 치과에 전화하라고 알려줘"),
        ("ja", "こんにちは！"),
        ("zh", "你好！"),
        ("ar", "ذكرني غدا الساعة 8 بالاتصال بطبيب الأسنان"),
        ("ru", "напомни мне завтра в 8 позвонить стоматологу"),
        ("hi", "कल सुबह 8 बजे मुझे दांत के डॉक्टर को फोन करने की याद दिलाना"),
    ],
)
def test_a_script_only_one_language_writes_tells_that_language(language: str, text: str) -> None:
    assert detect([text]) == language


def test_japanese_writes_kanji_among_its_kana() -> None:
    assert detect(["明日の朝8時に歯医者に電話するようリマインドして"]) == "ja"
    assert detect(["カレンダーに会議を入れて"]) == "ja"


def test_han_characters_without_kana_are_chinese() -> None:
    assert detect(["明天早上八点提醒我给牙医打电话"]) == "zh"
    assert detect(["帮我订一张去Paris的机票"]) == "zh"


def test_latin_words_in_a_message_of_another_script_are_names_not_its_language() -> None:
    brand = "احجز لي طاولة لشخصين الليلة في مطعم The Cheesecake Factory"
    assert detect([brand]) == "ar" and scores(brand)["en"] == 0
    assert detect(["أرسل رسالة على WhatsApp إلى أحمد"]) == "ar"
    assert detect(["Netflix 구독 취소해줘"]) == "ko"
    assert detect(["напиши Анне в Telegram"]) == "ru"


def test_a_message_of_long_names_is_still_told_by_its_few_words() -> None:
    assert detect(["закажи мне на Amazon Kindle Paperwhite"]) == "ru"
    assert detect(["用Google Maps查一下"]) == "zh"


def test_a_word_of_another_script_in_an_english_message_leaves_it_english() -> None:
    assert detect(["How do you say спасибо in English?"]) == "en"
    assert detect(["Please add 東京 to my trip list"]) == "en"


@pytest.mark.parametrize(
    ("said", "language"),
    [
        (["Привет! Как дела?", "Thanks, can you check the weather for tomorrow?"], "en"),
        (["Hello, how are you?", "明天会下雨吗？"], "zh"),
        (["明日の天気は？", "明天天气怎么样？"], "zh"),
        (["مرحبا، كيف حالك؟", "Hola, ¿qué tal?"], "es"),
        (["Ciao, come stai?", "Привет, как дела?"], "ru"),
        (["안녕, 잘 지내?", "Cześć, jak się masz?"], "pl"),
        (["Chào bạn, hôm nay thế nào?", "Hi, what's on my calendar today?"], "en"),
        (["नमस्ते, आप कैसे हैं?", "Merhaba, bugün nasılsın?"], "tr"),
    ],
)
def test_a_person_who_switches_language_is_followed_at_once(said: list[str], language: str) -> None:
    assert detect(said) == language


def test_a_short_all_kanji_reply_keeps_a_japanese_conversation_japanese() -> None:
    assert detect(["了解"]) == "zh"
    assert detect(["ありがとう、すごく助かった！", "了解"]) == "ja"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("it", "ricordami domani alle 8 di chiamare il dentista"),
        ("it", "Ciao! Che tempo fa oggi a Roma?"),
        ("nl", "herinner me morgen om 8 uur de tandarts te bellen"),
        ("nl", "Kun je een bericht naar Sanne sturen?"),
        ("pl", "przypomnij mi jutro o 8, żeby zadzwonić do dentysty"),
        ("pl", "Cześć! Co mam dziś do zrobienia?"),
        ("tr", "yarın saat 8'de dişçiyi aramamı hatırlat"),
        ("tr", "Merhaba! Bugün hava nasıl?"),
        ("id", "ingatkan aku besok jam 8 untuk telepon dokter gigi"),
        ("id", "Halo! Apa kabar? Ada jadwal apa hari ini?"),
        ("vi", "nhắc tôi 8 giờ sáng mai gọi cho nha sĩ"),
        ("vi", "Chào bạn! Hôm nay thời tiết thế nào?"),
    ],
)
def test_each_latin_script_language_is_told_by_its_words_and_letters(
    language: str, text: str
) -> None:
    assert detect([text]) == language


def test_turkish_capital_dotted_i_reads_as_turkish_not_as_the_english_i() -> None:
    assert detect(["İyi geceler"]) == "tr"
    assert scores("İyi geceler")["en"] == 0


def test_vietnamese_typed_with_combining_marks_is_read_like_precomposed() -> None:
    text = "Nhắc tôi mua sữa nhé"
    assert detect([unicodedata.normalize("NFD", text)]) == detect([text]) == "vi"


def test_a_tie_goes_to_the_language_listed_first() -> None:
    assert scores("con la")["es"] == scores("con la")["it"]
    assert detect(["con la"]) == "es"


def test_an_english_name_or_short_reply_stays_english() -> None:
    for said in ["Call Dan", "Meet Ben at 5", "go ahead", "ty", "ten", "thank u", "Mia"]:
        assert detect([said]) == "en", said


def test_the_languages_and_their_direction() -> None:
    assert list(LANGUAGES) == [
        *("en", "pt", "es", "fr", "de", "it", "nl", "pl", "tr", "id", "vi"),
        *("ru", "ar", "hi", "zh", "ja", "ko"),
    ]
    assert set(RIGHT_TO_LEFT) == {"ar"} and RIGHT_TO_LEFT.issubset(LANGUAGES)
