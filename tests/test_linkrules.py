"""Service-link rules (newscrawl.algorithms.linkrules): defaults, per-site entries, rules files."""

import json

import pytest

from newscrawl.algorithms.linkrules import DEFAULT_RULES, build_rules, load_rules


def reason(url, domain, *, article=False, own_host=""):
    return DEFAULT_RULES.service_reason(url, domain, article_shaped=article, own_host=own_host)


@pytest.mark.parametrize("url, domain, article, expected", [
    # real links of the labelled pages (tests/linkclass_labels.tsv)
    ("https://preisvergleich.heise.de/3336051?ccpid=hocid-pvgmodul&cs_id=1206858352", "heise.de",
     True, "host"),  # price comparison offer, article-shaped by its number
    ("https://jobs.heise.de/stellenanzeigen/3639796.html", "heise.de", True, "host"),
    ("https://stellenmarkt.sueddeutsche.de/jobs/it-tk-softwareentwicklung", "sueddeutsche.de",
     False, "host"),
    ("https://shop.zeit.de/buecher/zeit-editionen/8005/3er-set-zeit-edition-verbrechen", "zeit.de",
     True, "host"),
    ("http://coral.qq.com/5498693628", "qq.com", True, "host"),  # a comment thread
    ("https://business-services.heise.de/software/machine-learning-ki/beitrag/von-der-idee-zur-"
     "umsetzung-ki-projekte-richtig-planen-und-skalieren-5038", "heise.de", True, "host"),
    ("https://cmk.zeit.de/cms/microsite/13636/wandel-nachhaltig-digital-verantwort-ungsvoll",
     "zeit.de", True, "host"),  # sponsored microsite
    ("https://www.sueddeutsche.de/gutscheine/ebay", "sueddeutsche.de", False, "path"),
    ("https://www.sueddeutsche.de/newsletter-homepagefooter", "sueddeutsche.de", False, "path"),
    ("https://www.sueddeutsche.de/raetsel/aktuell/kreuzwortraetsel/", "sueddeutsche.de", False,
     "path"),
    ("https://www.heise.de/newsticker/$%7Burl%7D", "heise.de", False, "path"),  # template
    ("http://v.qq.com/detail/5/55472.html", "qq.com", True, "pattern"),  # a TV show's page
    ("https://v.qq.com/x/cover/5x2qc4mq9ctyu10.html", "qq.com", True, "pattern"),
    ("http://tv.sohu.com/drama/us/", "sohu.com", False, "prefix"),
    # news stays news
    ("https://v.qq.com/x/cover/te16jrp0mbc7cc2/m054506iqk6.html", "qq.com", True, ""),
    ("https://v.qq.com/x/page/f0546gkvcap.html", "qq.com", True, ""),
    ("https://www.zeit.de/digital/datenschutz/2023-04/big-brother-award-microsoft-lebenswerk",
     "zeit.de", True, ""),  # a 'datenschutz' subject directory, not the privacy page
    ("https://www.zeit.de/2023/18/arbeitszeiterfassung-schule-lehrer-lehrermangel-bildungssystem",
     "zeit.de", True, ""),
    ("https://www.sueddeutsche.de/sport", "sueddeutsche.de", False, ""),
    ("https://www.heise.de/thema/karriere", "heise.de", False, ""),
    ("https://www.heise.de/download/specials/Anonym-surfen-mit-VPN-Die-besten-VPN-Anbieter-im-"
     "Vergleich-3798036", "heise.de", True, ""),  # an editorial part of the download area
    ("https://www.heise.de/download/product/crystaldiskinfo-59349", "heise.de", True, "path"),  # a topic, not the careers page
    ("http://news.sina.com.cn/world/", "sina.com.cn", False, ""),
])
def test_service_reason_on_real_links(url, domain, article, expected):
    assert reason(url, domain, article=article) == expected


def test_the_pages_own_host_is_never_a_service_host():
    assert reason("https://m.example.com/news/a-b-c-d", "example.com") == "host"
    assert reason("https://m.example.com/news/a-b-c-d", "example.com",
                  own_host="m.example.com") == ""


def test_an_article_is_judged_by_its_site_area_only():
    # /jobs/... is a job ad even when article-shaped; a slug word never decides
    assert reason("https://www.example.com/jobs/senior-editor-12345678.html", "example.com",
                  article=True) == "path"
    assert reason("https://www.example.com/politik/karriere-ende-fuer-minister-12345678.html",
                  "example.com", article=True) == ""


def test_rules_file_extends_the_defaults(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"hosts": ["Wetter"], "paths": ["horoskop"],
                                "sites": {"example.com": {"hosts": ["radio"],
                                                          "prefixes": ["www.example.com/tv/"],
                                                          "patterns": [r"^www\.example\.com/x\d+$"]},
                                          "heise.de": {"hosts": ["www2"]}}}))
    rules = load_rules(path)
    check = lambda url, dom: rules.service_reason(url, dom, article_shaped=False)  # noqa: E731
    assert check("https://wetter.example.org/", "example.org") == "host"
    assert check("https://www.example.org/horoskop/stier", "example.org") == "path"
    assert check("https://radio.example.com/", "example.com") == "host"
    assert check("https://radio.example.org/", "example.org") == ""  # per-site only
    assert check("https://www.example.com/tv/shows/", "example.com") == "prefix"
    assert check("https://www.example.com/x12", "example.com") == "pattern"
    assert check("https://shop.heise.de/", "heise.de") == "host"  # defaults kept
    assert check("https://it-kenner.heise.de/", "heise.de") == "host"  # site defaults merged
    assert check("https://www2.heise.de/", "heise.de") == "host"


def test_rules_file_can_replace_the_defaults(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"replace": True, "hosts": ["only"]}))
    rules = load_rules(str(path))
    assert rules.service_reason("https://shop.heise.de/", "heise.de", article_shaped=False) == ""
    assert rules.service_reason("https://only.heise.de/", "heise.de", article_shaped=False) == "host"


@pytest.mark.parametrize("content, message", [
    ("not json", "rules.json"),
    ("[1, 2]", "JSON object"),
    ('{"hosts": "shop"}', "list of strings"),
    ('{"unknown": 1}', "unknown keys"),
    ('{"sites": {"x.com": {"patterns": ["("]}}}', "patterns"),
    ('{"sites": {"x.com": {"colour": ["red"]}}}', "unknown keys"),
])
def test_bad_rules_files_raise_a_clear_error(tmp_path, content, message):
    path = tmp_path / "rules.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        load_rules(path)


def test_rules_given_inline():
    rules = load_rules(' {"replace": true}')
    assert rules.service_reason("https://shop.heise.de/", "heise.de", article_shaped=False) == ""
    with pytest.raises(ValueError, match="unknown keys"):
        load_rules('{"colour": 1}')


def test_missing_rules_file_names_the_file(tmp_path):
    with pytest.raises(ValueError, match="nope.json"):
        load_rules(tmp_path / "nope.json")


def test_no_file_gives_the_defaults():
    assert load_rules("") == build_rules() == DEFAULT_RULES
