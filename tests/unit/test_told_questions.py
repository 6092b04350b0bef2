"""Questions about what Violet told, told apart from questions about the person
(`violet.told`), on phrasings other than those the rules were first written from."""

from __future__ import annotations

import pytest

from violet.told import about_the_person, asks_what_was_told, may_recall_told

ABOUT_WHAT_WAS_TOLD = [
    "Remind me what the weather site said for Saturday",
    "What was the name of that café you recommended?",
    "How much did you say the tickets cost?",
    "what were the opening hours you found for the pool?",
    "Can you repeat what you told me about the bus strike?",
    "the recipe you sent me — how many eggs again?",
    "Which hotel did you pick for us?",
    "What did that article say about the new law?",
    "what number did you get for the mortgage?",
    "Where is the packing list you made?",
    "What was the link you gave me for the concert?",
    "Tell me again what you found out about the museum",
    "What did the search turn up about cheap flights?",
    "Which trail did you suggest for Sunday's hike?",
    "what did you come up with for dinner ideas?",
    "When did you say the library closes?",
    "What was on that website about vaccines?",
    "What's the total you worked out for the party?",
    "¿Qué restaurante me recomendaste?",
    "Was stand auf der Seite über die Gezeiten?",
    # Italian, Dutch, Polish, Turkish, Indonesian, Vietnamese
    "Come si chiamava il ristorante che mi hai consigliato?",
    "A che ora hai detto che parte il traghetto?",
    "Cosa diceva quella pagina sulle maree?",
    "Welk restaurant heb je me aangeraden?",
    "Hoe laat zei je dat de veerboot vertrekt?",
    "Wat stond er op die pagina over de getijden?",
    "Jaką restaurację mi poleciłaś?",
    "O której powiedziałaś, że odpływa prom?",
    "Co było na tej stronie o pływach?",
    "Bana önerdiğin restoranın adı neydi?",
    "Feribot saat kaçta kalkıyor dedin?",
    "O sayfada gelgitler hakkında ne yazıyordu?",
    "Restoran apa yang kamu rekomendasikan kemarin?",
    "Tadi kamu bilang feri berangkat jam berapa?",
    "Apa isi artikel itu tentang pasang surut?",
    "Bạn đã gợi ý nhà hàng nào cho tôi?",
    "Lúc nãy bạn nói phà khởi hành lúc mấy giờ?",
    "Trang web đó nói gì về thủy triều?",
    # Russian, Arabic, Hindi, Chinese, Japanese, Korean; the first of each but Hindi's asks what
    # was told "to me"
    "Какой ресторан ты мне посоветовала?",
    "Во сколько, ты сказала, отходит паром?",
    "Что было на той странице про приливы?",
    "ماذا قلتِ لي عن موعد العبّارة؟",
    "ما اسم المطعم الذي اقترحتيه؟",
    "ماذا كان في تلك الصفحة عن المد والجزر؟",
    "आपने मुझे कौन सा रेस्टोरेंट सुझाया था?",
    "तुमने कहा था कि फ़ेरी कितने बजे निकलती है?",
    "उस पेज पर ज्वार के बारे में क्या लिखा था?",
    "你给我推荐的那家餐厅叫什么?",
    "你刚才说渡轮几点开?",
    "那个网页上关于潮汐说了什么?",
    "私に勧めてくれたレストランはどこでしたか?",
    "さっき教えてくれたお店の名前は何でしたっけ?",
    "そのページには潮について何て書いてあった?",
    "저한테 추천해준 식당이 어디였죠?",
    "아까 네가 말한 페리 시간이 몇 시였지?",
    "지난번에 알려주신 박물관 개관 시간이 언제였죠?",
]
ABOUT_THE_PERSON = [
    "What is my password?",
    "Where do I work?",
    "Who is my dentist?",
    "When is my mum's birthday?",
    "What did I say my PIN was?",
    "What do I usually order?",
    "Quel est mon mot de passe ?",
    "Wo wohne ich?",
    "Onde eu moro?",
    "¿Dónde vivo?",
    # The last of each language asks what the person told, or someone of theirs did.
    "Qual è la mia password?",
    "Dove abita mia sorella?",
    "Cosa ti ho detto della mia password?",
    "Wat is mijn pincode?",
    "Waar woon ik?",
    "Wat had ik je verteld over mijn pincode?",
    "Jaki jest mój PIN?",
    "Kiedy są urodziny mojej mamy?",
    "Co ci powiedziałem o moim haśle?",
    "Benim şifrem neydi?",
    "Annemin doğum günü ne zaman?",
    "Sana şifremi söyledim mi?",
    "Apa kata sandi saya?",
    "Kapan ulang tahun ibuku?",
    "Apa yang saya katakan kepada kamu tadi?",
    "Mật khẩu của tôi là gì?",
    "Sinh nhật mẹ mình là ngày nào?",
    "Bạn tôi nói gì về tôi?",
    "Какой у меня пароль?",
    "Где живёт моя сестра?",
    "Ты помнишь, что я сказал про мой пароль?",
    "ما هو عنواني؟",
    "أين تسكن أمي؟",
    "ماذا كتبت لي أختي؟",
    "मेरा पासवर्ड क्या है?",
    "मैं कहाँ काम करता हूँ?",
    "मैंने तुम्हें अपना पिन क्या बताया था?",
    "我的密码是什么?",
    "我住在哪里?",
    "我跟你说过我的密码是多少?",
    "私の暗証番号は何?",
    "僕はどこで働いてる?",
    "母が教えてくれた暗証番号は何だっけ?",
    "제 비밀번호가 뭐였죠?",
    "내 생일이 언제야?",
    "제가 알려준 비밀번호가 뭐였죠?",
    "엄마가 추천해준 병원이 어디였지?",
]
# Questions about the person that name no word of theirs: "I" is in the verb, or "my" in
# "母" and "엄마". Only their language keeps told records from them.
NAMING_NO_WORD_OF_THEIRS = {
    "¿Dónde vivo?",
    "母が教えてくれた暗証番号は何だっけ?",
    "엄마가 추천해준 병원이 어디였지?",
}


@pytest.mark.parametrize("question", ABOUT_WHAT_WAS_TOLD)
def test_a_question_about_what_violet_told_gets_told_records(question: str) -> None:
    assert asks_what_was_told(question)
    assert may_recall_told(question)
    assert not about_the_person(question)


@pytest.mark.parametrize("question", ABOUT_THE_PERSON)
def test_a_question_about_the_person_never_gets_told_records(question: str) -> None:
    assert not may_recall_told(question)


@pytest.mark.parametrize(
    "question", [words for words in ABOUT_THE_PERSON if words not in NAMING_NO_WORD_OF_THEIRS]
)
def test_the_person_speaking_of_themselves_is_read_in_every_language(question: str) -> None:
    assert about_the_person(question)
    assert not asks_what_was_told(question)


def test_other_questions_get_them_beside_the_items_in_english_alone() -> None:
    assert may_recall_told("when does the museum open?")
    assert not may_recall_told("¿cuándo abre el museo?")
    assert not may_recall_told("thanks, that's lovely")
