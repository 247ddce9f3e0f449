"""StoryClusterer (newscrawl/algorithms/stories.py): shingles, signatures, incremental
clustering, state round trip."""

from __future__ import annotations

import pytest

from newscrawl.algorithms.stories import (
    StoryClusterer,
    decode_signature,
    encode_signature,
    shingles,
)

# A wire story as two sites carried it: the second cut a sentence, changed a few words and the
# headline (as dpa copy appears on several sites).
WIRE = ("Nach der Massenschlägerei beim Euroleague-Spiel zwischen Real Madrid und Partizan Belgrad "
        "hat ein Disziplinarrichter der kontinentalen Basketball-Liga strenge Sanktionen "
        "festgesetzt. Beide Clubs müssen ein Strafgeld von je 50.000 Euro zahlen. Vier Spieler "
        "wurden mit Sperren belegt. Am härtesten traf es Guershon Yabusele von Real Madrid. Er "
        "hatte seinen Gegenspieler Dante Exum zu Boden geworfen und muss die nächsten fünf Spiele "
        "zuschauen. Kevin Punter erhielt eine Sperre von zwei Spielen.")
REWRITE = ("Nach der Massenschlägerei beim Euroleague-Spiel zwischen Real Madrid und Partizan "
           "Belgrad hat ein Disziplinarrichter der Basketball-Liga harte Sanktionen festgesetzt. "
           "Beide Clubs müssen ein Strafgeld von je 50.000 Euro bezahlen. Vier Spieler wurden "
           "gesperrt. Am härtesten traf es Guershon Yabusele von Real Madrid. Er hatte seinen "
           "Gegenspieler Dante Exum zu Boden geworfen und muss die nächsten fünf Spiele zuschauen.")
OTHER = ("Der Deutsche Wetterdienst erwartet für das Wochenende in Norddeutschland kräftigen Regen "
         "und Sturmböen. In Hamburg und Bremen können die Böen Geschwindigkeiten von mehr als 80 "
         "Kilometern pro Stunde erreichen. Die Feuerwehr rät, Balkone und Gärten zu sichern.")
# The same event told in other words (another site's own report): not the same text.
SAME_EVENT = ("Die Euroleague bestraft Real Madrid und Partizan Belgrad nach der Prügelei: Je "
              "50.000 Euro Strafe, Yabusele fehlt fünf Partien, zwei Profis von Partizan je eine.")


def test_word_shingles_and_character_shingles_for_chinese():
    assert shingles("Apple wirft", "Python raus", k=2) == {
        "apple wirft", "wirft python", "python raus"}
    assert shingles(None, "北京冬奥会开幕", k=3) == {"北 京 冬", "京 冬 奥", "冬 奥 会", "奥 会 开", "会 开 幕"}
    assert shingles("kurz", None, k=3) == {"kurz"}
    assert shingles("eins zwei drei vier", None, k=2, max_tokens=3) == {"eins zwei", "zwei drei"}
    assert shingles(None, " — ", k=3) == set()
    with pytest.raises(ValueError):
        shingles("a", "b", k=0)


def test_a_lightly_edited_copy_joins_the_story_and_other_stories_do_not():
    c = StoryClusterer()
    first = c.assign("a" * 16, "Sanktionen nach Massenschlägerei", WIRE)
    assert first is not None and first.new_story and first.story_id == "a" * 16
    copy = c.assign("b" * 16, "Euroleague: Strafen nach Prügelei in Madrid", REWRITE)
    assert copy is not None and not copy.new_story
    assert copy.story_id == "a" * 16 and copy.matched == "a" * 16
    assert copy.similarity >= c.threshold
    other = c.assign("c" * 16, "Sturm im Norden", OTHER)
    assert other is not None and other.new_story and other.story_id == "c" * 16
    event = c.assign("d" * 16, "Euroleague bestraft Real und Partizan", SAME_EVENT)
    assert event is not None and event.story_id == "d" * 16  # other words: not a near-duplicate
    assert c.stories() == {"a" * 16: ["a" * 16, "b" * 16], "c" * 16: ["c" * 16], "d" * 16: ["d" * 16]}


def test_chinese_near_duplicates_join_by_character_shingles():
    text = ("国家统计局今天发布数据显示，今年一季度国内生产总值同比增长百分之五点三，"
            "比上年四季度环比增长百分之一点六，国民经济实现良好开局。")
    c = StoryClusterer()
    c.assign("zh1", "一季度经济数据发布", text)
    copy = c.assign("zh2", "一季度GDP同比增长5.3%", text.replace("今天", "16日"))
    assert copy is not None and copy.story_id == "zh1"
    other = c.assign("zh3", "北京", "北京市今天迎来入春以来最大的一场降雨，气象台发布暴雨蓝色预警。")
    assert other is not None and other.story_id == "zh3"


def test_a_known_article_keeps_its_story_and_an_empty_one_gets_none():
    c = StoryClusterer()
    c.assign("a", "T", WIRE)
    c.assign("b", "T", REWRITE)
    again = c.assign("b", "Ganz neu", OTHER)  # its text changed completely: the story stays
    assert again is not None and again.story_id == "a" and not again.new_story
    assert c.assign("e", "", "  ") is None and "e" not in c
    with pytest.raises(ValueError):
        c.assign("", "T", WIRE)


def test_state_round_trip_rebuilds_the_index():
    c = StoryClusterer()
    c.assign("a", "T", WIRE)
    c.assign("c", "Sturm", OTHER)
    restored = StoryClusterer()
    assert restored.restore(c.state()) == 2
    copy = restored.assign("b", "Euroleague", REWRITE)
    assert copy is not None and copy.story_id == "a"
    # Signatures of other settings, or garbage, are skipped (logged), not fatal.
    wrong = StoryClusterer(num_perm=64)
    assert wrong.restore([("a", "a", c.state()[0][2]), ("x", "x", "%%%"), ("", "s", "AAAA")]) == 0


def test_signature_encodings():
    c = StoryClusterer()
    m = c.minhash("T", WIRE)
    text = encode_signature(m.hashvalues)
    assert len(text) == 684  # 128 × 4 bytes in base64
    assert list(decode_signature(text, 128)) == list(m.hashvalues)
    raw = bytes(base64_bytes(text))
    assert list(decode_signature(raw, 128)) == list(m.hashvalues)
    assert list(decode_signature([int(v) for v in m.hashvalues], 128)) == list(m.hashvalues)
    for bad in ("not base64!", b"abc", [1, 2]):
        with pytest.raises(ValueError):
            decode_signature(bad, 128)
    with pytest.raises(ValueError):
        encode_signature([2**40])


def base64_bytes(text: str) -> bytes:
    import base64

    return base64.b64decode(text)


@pytest.mark.parametrize("kwargs", [{"threshold": 0}, {"threshold": 1.0}, {"num_perm": 8},
                                    {"shingle_size": 0}])
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        StoryClusterer(**kwargs)


def test_forget_drops_an_article_from_the_index():
    c = StoryClusterer()
    c.assign("a", "T", WIRE)
    assert c.forget("a") and not c.forget("a") and len(c) == 0
    copy = c.assign("b", "Euroleague", REWRITE)
    assert copy is not None and copy.new_story and copy.story_id == "b"
