"""Hand-checked link classification tables of real pages, shared by
``tests/test_linkclass_real.py`` and ``benchmarks/linkclass_quality.py``.

The pages are read in place from ``../shared/corpus`` (``NEWSCRAWL_SHARED`` overrides
``../shared``); nothing here is copied into the repository. :func:`load_page` raises
:class:`MissingCorpus` naming the missing path, which the test turns into a skip.

Tables
------
:data:`TABLES` maps a page name to rows ``(url, expected_class, expected_role, note)``:

- ``url``: the canonical URL (:func:`newscrawl.algorithms.urls.canonicalize_url`) the pipeline
  ``extract_links`` → ``classify_page`` must list for that page (tracking parameters and
  fragments are gone, so ``…/download/search#?…&wt_mc=…`` is ``…/download/search``);
- ``expected_class``: the :class:`~newscrawl.algorithms.linkclass.LinkClass` value DESIGN.md §2
  assigns by URL structure relative to the page (registered domains from the Public Suffix List:
  ``news.sina.com.cn`` belongs to ``sina.com.cn``, ``med.sina.com`` and ``sina.cn`` do not);
- ``expected_role``: what a careful reader monitoring news says is right, following the roles of
  the module docstring of ``linkclass.py``: ``content`` for one article (also a photo gallery, a
  video news item, a blog post; on another host of the same site too, as crosswise content),
  ``node`` for a channel / section / topic / list page — of the crawled host, of another branch
  of it, or of a sister host the page shows to be editorial (issue 10; before, crosswise
  channels were dropped and only their host's ``http(s)://host/`` entry followed) — and for a
  frame served by the site, ``dropped`` for outward links, upward links, service pages (imprint,
  privacy, vouchers, puzzles, jobs, shops, price comparison, sponsored hosts: issue 10; before,
  those of the crawled host were node links) and other pages that list no news.

Every row was checked by hand: the anchor text and its place in the page, and the URL scheme of
the site. Rows were *not* copied from the classifier's output. Where the classifier disagrees,
the row stays as it should be and :data:`KNOWN_WRONG` names it (page → URL → fix id); the test
marks those rows ``xfail(strict=True)`` so that fixing the classifier flips them. :data:`FIXES`
describes each proposed fix.

Links that even a careful reader cannot call from the page alone (job ads, price-comparison
offers, novels, quiz or download product pages, a complaint page …) are left out of the tables
rather than guessed.

The four home pages of the issue (sueddeutsche, heise, sina, qq) hold no protocol-relative
``//host/…`` anchors, no usable frames (qq has one ``<iframe src="">``, which is not a link) and
no ``?query``-only hrefs; three small supplementary tables cover those from other real pages:
``sohu`` (201 protocol-relative anchors), ``zeit`` (an ad frame and a site frame) and
``sueddeutsche_sport`` (site iframes, and the UPWARD / same-host CROSSWISE classes a home page
cannot show).

Other labelled data for ``benchmarks/linkclass_quality.py``: :func:`newspaper4k_url_labels`
(set 08, article vs non-article URLs) and :func:`list_page_labels` (set 11, links on list pages
that point at detail pages, labelled by the sites' documented detail-URL schemes).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

SHARED = Path(os.environ.get("NEWSCRAWL_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CORPUS = SHARED / "corpus"

SET01 = "01_frontpage-archive_de_home-sections"
SET02 = "02_servo-warc_portal-homepages"
SET08 = "08_newspaper4k_testdata"
SET11 = "11_gerapy_zh_list-vs-detail"


class MissingCorpus(FileNotFoundError):
    """A corpus file is not there; ``str(exc)`` names the path."""


@dataclass(frozen=True)
class PageSource:
    """Where a page lives in the corpus.

    Attributes:
        url: the page's URL (StartURL of the classification).
        path: file below :data:`CORPUS` (an HTML file, or a WARC holding the response).
        warc: True when ``path`` is a WARC; the response record for ``url`` is read.
    """

    url: str
    path: str
    warc: bool = False


PAGES: dict[str, PageSource] = {
    "sueddeutsche": PageSource("https://www.sueddeutsche.de/",
                               f"{SET01}/sueddeutsche.de_2024-10-01/index.html"),
    "heise": PageSource("https://www.heise.de/", f"{SET01}/heise.de_2026-03-01/index.html"),
    "sina": PageSource("https://www.sina.com.cn/",
                       f"{SET02}/collections/Sina/archive/"
                       "rec-20180808064152840331-anjiadeMacBook-Pro.local.warc.gz", warc=True),
    "qq": PageSource("https://www.qq.com/",
                     f"{SET02}/collections/qq/archive/rec-20180222114434301946-paragon.warc.gz",
                     warc=True),
    # Supplements: link forms the four home pages do not have.
    "sohu": PageSource("http://www.sohu.com/",
                       f"{SET02}/collections/Sohu/archive/"
                       "rec-20180808063643743492-anjiadeMacBook-Pro.local.warc.gz", warc=True),
    "zeit": PageSource("https://www.zeit.de/index", f"{SET01}/zeit.de_2023-05-01/index.html"),
    "sueddeutsche_sport": PageSource("https://www.sueddeutsche.de/sport",
                                     f"{SET01}/sueddeutsche.de_2024-10-01/sport.html"),
    # Channel pages of the fully labelled set (tests/linkclass_labelling.py).
    "zeit_news": PageSource("https://www.zeit.de/news/index", f"{SET01}/zeit.de_2023-05-01/news.html"),
    "heise_newsticker": PageSource("https://www.heise.de/newsticker/",
                                   f"{SET01}/heise.de_2026-03-01/newsticker.html"),
    "tencent_news": PageSource("https://news.qq.com/",
                               f"{SET11}/list/tencent_important_news.html"),
}

#: The four home pages of the issue (at least 45 hand-checked rows each).
HOME_PAGES = ("sueddeutsche", "heise", "sina", "qq")


def corpus_path(*parts: str) -> Path:
    """``CORPUS/<parts>``; raises :class:`MissingCorpus` naming the path when it is absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        raise MissingCorpus(str(path))
    return path


def _warc_response(path: Path, url: str) -> tuple[bytes, str | None]:
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as stream:
        for record in ArchiveIterator(stream):
            if (record.rec_type == "response"
                    and record.rec_headers.get_header("WARC-Target-URI") == url):
                content_type = record.http_headers.get_header("Content-Type")
                return record.content_stream().read(), content_type
    raise MissingCorpus(f"{path}: no response record for {url}")


def _decode(body: bytes, http_charset: str | None) -> str:
    try:
        from newscrawl.algorithms.charset import decode_html
    except ImportError:  # pragma: no cover - charset.py is part of the project
        return body.decode("gb18030" if http_charset and "gb" in http_charset.lower()
                           else "utf-8", errors="replace")
    return decode_html(body, http_charset=http_charset)[0]


def load_page(name: str) -> tuple[str, str]:
    """Return ``(page URL, decoded HTML text)`` of a page of :data:`PAGES`.

    WARC pages are decoded from their bytes with the HTTP ``Content-Type`` charset (none for
    sina, GB2312 for qq) by :func:`newscrawl.algorithms.charset.decode_html`.
    """
    source = PAGES[name]
    path = corpus_path(source.path)
    if source.warc:
        body, content_type = _warc_response(path, source.url)
        return source.url, _decode(body, content_type)
    return source.url, _decode(path.read_bytes(), None)


def classify(name: str, **kwargs):
    """Run the pipeline under test on a page: ``(PageClassification, ExtractionStats)``.

    ``root = lxml.html.fromstring(text)``; ``extract_links(root, url)``;
    ``classify_page(url, raw, **kwargs)`` (defaults unless ``kwargs`` say otherwise).
    """
    import lxml.html

    from newscrawl.algorithms.linkclass import classify_page
    from newscrawl.algorithms.linkextract import ExtractionStats, extract_links

    url, text = load_page(name)
    stats = ExtractionStats()
    raw = extract_links(lxml.html.fromstring(text), url, stats=stats)
    return classify_page(url, raw, **kwargs), stats


# --------------------------------------------------------------------------------------------
# Hand-checked tables
# --------------------------------------------------------------------------------------------

H, D, C, O, U, F = "horizontal", "downward", "crosswise", "outward", "upward", "frame"
NODE, CONTENT, DROPPED = "node", "content", "dropped"

SZ = "https://www.sueddeutsche.de"
SUEDDEUTSCHE = [
    (f"{SZ}/", H, NODE, "logo 'SZ.de': the page itself"),
    ("https://zeitung.sueddeutsche.de/", C, DROPPED, "e-paper subdomain: crosswise, host entry"),
    ("https://sz-magazin.sueddeutsche.de/", C, NODE, "'Magazin': subdomain home page: a channel on a sister host"),
    ("https://plus.sueddeutsche.de/", C, DROPPED, "'SZ Plus' subscription subdomain"),
    ("https://jetzt.de/", O, DROPPED, "'Jetzt': sister brand on its own registered domain"),
    ("https://www.jetzt.de/", O, DROPPED, "same brand with www: still outward"),
    ("https://www.sz-dossier.de/", O, DROPPED, "'Dossier': sz-dossier.de is another domain"),
    ("http://www.sz.de/thema/Testament", O, DROPPED,
     "sz.de short domain (an alias that redirects): by URL another registered domain"),
    (f"{SZ}/politik", D, NODE, "section 'Politik' without trailing slash"),
    (f"{SZ}/sport", D, NODE, "section 'Sport'"),
    (f"{SZ}/muenchen", D, NODE, "section 'München'"),
    (f"{SZ}/muenchen/dachau", D, NODE, "local subsection 'Dachau'"),
    (f"{SZ}/thema/Ukraine", D, NODE, "topic page"),
    (f"{SZ}/thema/%C3%96sterreich", D, NODE, "topic 'Österreich', percent-encoded umlaut"),
    (f"{SZ}/thema/FC_Bayern_M%C3%BCnchen", D, NODE, "topic with underscores and umlaut"),
    (f"{SZ}/thema/Sorgenfrei_vorsorgen_-_die_gro%C3%9Fe_Serie_zur_Altersvorsorge", D, NODE,
     "'Altersvorsorge-Serie': a long topic name is still a topic page"),
    (f"{SZ}/thema/Die_Seite_Drei", D, NODE, "'Reportage' topic"),
    ("http://www.sueddeutsche.de/thema/Grippe", D, NODE,
     "http:// link on the https page: same host, so downward"),
    (f"{SZ}/news?all%5B%5D=sys&all%5B%5D=time&dep%5B%5D=panorama&dep%5B%5D=politik"
     "&dep%5B%5D=wirtschaft&search=&sort=date&typ%5B%5D=article", D, NODE,
     "'Newsticker': a list selected by its query string (query sorted by canonicalisation)"),
    (f"{SZ}/meinesz", D, DROPPED, "'Meine SZ' account page: not an article"),
    (f"{SZ}/politik/libanon-israel-buergerkrieg-lux.RKQ8PqAWYWXaxgmp2UQ4YL", D, CONTENT,
     "lead article, lux. id"),
    (f"{SZ}/politik/israel-krieg-news-liveticker-libanon-bodeneinsatz-usa-"
     "lux.Y3GEiP1SiYxUnqjL7T5Nkj", D, CONTENT, "live ticker: one article page"),
    (f"{SZ}/wirtschaft/inflation-ezb-leitzins-lux.DZ1HA8Q8SXobxV2hFLLUzD", D, CONTENT,
     "article with a three-word slug"),
    (f"{SZ}/wissen/artenvielfalt-bericht-umwelt-lux.4mf3Juuqf1QbKZsdj9cH7T", D, CONTENT,
     "article in 'Wissen'"),
    (f"{SZ}/muenchen/antisemitismus-527-faelle-von-israelfeindlichem-judenhass-in-nur-sechs-"
     "monaten-lux.KamycjB4ZGAJoBCGDrJjPK", D, CONTENT, "article in the München section"),
    (f"{SZ}/gesundheit/krebs-gesundheit-praevention-rauchen-ernaehrung-sport-1.5724391", D,
     CONTENT, "old-style 1.NNNNNNN article id"),
    (f"{SZ}/stil/cappuccino-milchaufschaeumer-milchschaum-lifehack-1.6318012", D, CONTENT,
     "old-style article id"),
    (f"{SZ}/politik/die-turbulente-sitzung-im-video-li.3120660", D, CONTENT, "video article"),
    (f"{SZ}/wissen/mount-everest-groesse-li.3122518", D, CONTENT, "short slug with li. id"),
    (f"{SZ}/leben/romanverfilmung-eisermann-pfalz-film-ein-mann-seiner-klasse-sehr-bewegend-"
     "dpa.urn-newsml-dpa-com-20090101-241001-930-248286", D, CONTENT, "dpa agency article (urn)"),
    (f"{SZ}/leben/bilder-des-tages-fotografie-pressefotografie-lux.AZxwDCMqhFddQCvqZzqWzt", D,
     CONTENT, "'Bilder des Tages' photo gallery article"),
    (f"{SZ}/thema/Bilder_des_Tages", D, NODE, "…and its topic page"),
    (f"{SZ}/projekte/artikel/muenchen/oktoberfest-2024-muenchen-wiesn-nacht-bilder-party-"
     "feiern-e524883/", D, CONTENT, "storytelling article with trailing slash, deep path"),
    (f"{SZ}/projekte/artikel/politik/taylor-swift-e568822/", D, CONTENT,
     "two-word slug + e-id, trailing slash"),
    (f"{SZ}/projekte/artikel/kultur/podcast-rammstein-feuerzone-lindemann-e820426", D, CONTENT,
     "podcast episode page, no trailing slash"),
    ("https://sz-magazin.sueddeutsche.de/liebe-und-partnerschaft/beziehung-andere-politische-"
     "einstellung-94273", C, CONTENT, "SZ-Magazin article on another host: crosswise content"),
    ("https://sz-magazin.sueddeutsche.de/familie/notluegen-kinder-eltern-94285", C, CONTENT,
     "SZ-Magazin article"),
    ("https://projekte.sueddeutsche.de/artikel/medien/artikel-e370761/", C, CONTENT,
     "'Going to Ibiza' podcast article on projekte.: slug is only 'artikel'"),
    ("https://sz-magazin.sueddeutsche.de/tag/das-rezept", C, NODE,
     "'Das Rezept' tag page of SZ-Magazin: not an article"),
    ("https://sz-magazin.sueddeutsche.de/tag/das-kreuz-mit-den-worten/", C, NODE,
     "'Das Kreuz mit den Worten' tag page (puzzle column), five-word tag name"),
    ("https://stellenmarkt.sueddeutsche.de/jobs/it-tk-softwareentwicklung", C, DROPPED,
     "job-market category on a subdomain"),
    ("https://iqtest.sueddeutsche.de/", C, DROPPED, "IQ test subdomain"),
    ("https://szshop.sueddeutsche.de/", C, DROPPED,
     "shop banner: href carries utm_source/utm_medium/utm_campaign, stripped"),
    (f"{SZ}/gutscheine", D, DROPPED, "voucher portal: href has utm_medium/utm_term, stripped"),
    (f"{SZ}/gutscheine/ebay", D, DROPPED, "voucher page (utm parameters stripped)"),
    (f"{SZ}/sport-liveticker/fussball/deutschland-bundesliga/spiele-und-ergebnisse/", D, DROPPED,
     "results table, not an article"),
    (f"{SZ}/raetsel/aktuell/kreuzwortraetsel/", D, DROPPED, "crossword puzzle page"),
    (f"{SZ}/app/spiele/sudoku/", D, DROPPED, "game page"),
    (f"{SZ}/impressum", D, DROPPED, "imprint"),
    (f"{SZ}/datenschutz", D, DROPPED, "privacy page"),
    (f"{SZ}/consent/widerruf", D, DROPPED, "consent withdrawal page"),
    ("https://twitter.com/sz", O, DROPPED, "social profile"),
    ("https://www.swmh-datenschutz.de/sz_vertragsbedingungen", O, DROPPED,
     "publisher group's legal domain"),
]

HEISE_ = "https://www.heise.de"
HEISE = [
    (f"{HEISE_}/", H, NODE, "relative href '/': the page itself"),
    (f"{HEISE_}/?p=2", H, NODE, "'Nächste': relative '/?p=2', next page of the home page"),
    (f"{HEISE_}/newsticker/", D, NODE, "relative '/newsticker/'"),
    (f"{HEISE_}/newsticker", D, NODE, "same section without slash: another URL, still a node"),
    (f"{HEISE_}/newsticker/netzpolitik/", D, NODE, "'Alle Meldungen aus Netzpolitik'"),
    (f"{HEISE_}/newsticker/it/", D, NODE, "ticker subsection"),
    (f"{HEISE_}/plus", D, NODE, "relative '/plus'"),
    (f"{HEISE_}/plus/abo?affiliateId=30165", D, DROPPED, "subscription page with a query"),
    (f"{HEISE_}/thema", D, NODE, "'Alle Themen'"),
    (f"{HEISE_}/thema?p=A", D, NODE, "topic index letter A: only the query differs from /thema"),
    (f"{HEISE_}/thema?p=Ziffer", D, NODE, "topic index '123'"),
    (f"{HEISE_}/thema/Kuenstliche-Intelligenz", D, NODE, "topic 'KI'"),
    (f"{HEISE_}/thema/MWC", D, NODE, "topic 'MWC 2026'"),
    (f"{HEISE_}/en", D, NODE, "English section"),
    (f"{HEISE_}/bestenlisten", D, NODE, "best-of lists section"),
    (f"{HEISE_}/newsletter/", D, DROPPED, "newsletter page"),
    (f"{HEISE_}/forum/startseite/", D, DROPPED, "forum start page"),
    (f"{HEISE_}/video/", D, NODE, "'Mehr Videos'"),
    (f"{HEISE_}/account/cancellation", D, DROPPED, "'Verträge kündigen'"),
    (f"{HEISE_}/netze/netzwerk-tools/imonitor-internet-stoerungen/", D, DROPPED,
     "iMonitor tool page"),
    (f"{HEISE_}/download/search", D, DROPPED,
     "'Alle Top-Downloads'; another href '…/download/search#?page=1&…&wt_mc=…' is the same URL "
     "once the fragment is dropped"),
    (f"{HEISE_}/download/product/rufus", D, DROPPED, "software download page, not an article"),
    (f"{HEISE_}/kontakt/?frage=3212474", D, DROPPED, "'Barriere melden' contact form"),
    (f"{HEISE_}/impressum.html", H, DROPPED, "imprint in the home directory"),
    (f"{HEISE_}/Datenschutzerklaerung-der-Heise-Medien-GmbH-Co-KG-4860.html", H, DROPPED,
     "privacy policy (href has #datenschutz-newsletter): a legal page, not news"),
    (f"{HEISE_}/news/Gesetzentwurf-Polizei-soll-Cyberangriffe-nicht-mehr-nur-reaktiv-abwehren-"
     "duerfen-11194068.html", D, CONTENT, "top story"),
    (f"{HEISE_}/news/Jetzt-koennen-wirklich-alle-programmieren-11193749.html", D, CONTENT,
     "relative href, four anchors merged into one link"),
    (f"{HEISE_}/news/Disney-bringt-HDR-zurueck-11192517.html", D, CONTENT, "short news"),
    (f"{HEISE_}/tests/Smartphone-mit-Leica-Kamera-Xiaomi-17-Ultra-im-Test-11167903.html", D,
     CONTENT, "test report"),
    (f"{HEISE_}/ratgeber/Eine-Radarkontrolle-fuers-Buero-selber-bauen-11139917.html", D, CONTENT,
     "how-to article"),
    (f"{HEISE_}/ratgeber/Die-Makey-Lab-Plattform-11153763.html", D, CONTENT, "Make article"),
    (f"{HEISE_}/hintergrund/Autonomes-Fahren-Wer-haftet-wann-11179834.html", D, CONTENT,
     "background article"),
    (f"{HEISE_}/meinung/Die-Solarfalle-der-Katherine-Reiche-11193734.html", D, CONTENT,
     "opinion piece"),
    (f"{HEISE_}/en/news/Best-Western-Hotels-warns-of-phishing-attacks-11189092.html", D, CONTENT,
     "English article"),
    (f"{HEISE_}/-11192315", H, CONTENT, "short article URL (only '-' and the id)"),
    (f"{HEISE_}/download/specials/Anonym-surfen-mit-VPN-Die-besten-VPN-Anbieter-im-Vergleich-"
     "3798036", D, CONTENT, "comparison article in the download area"),
    (f"{HEISE_}/bestenlisten/testsieger/top-10-die-besten-saugroboter-im-test-roborock-vor-"
     "eufy-dyson-hinten/2dxtvlp", D, CONTENT,
     "'Top 10: Die besten Saugroboter im Test': an article; the slug is the parent segment and "
     "the last segment a short opaque id"),
    (f"{HEISE_}/bestenlisten/testbericht/dyson-spot-scrub-ai-im-test-ueberraschend-"
     "unspektakulaerer-saugroboter/b10vr5x", D, CONTENT, "test report, same URL scheme"),
    ("https://shop.heise.de/", C, DROPPED, "'heise shop' subdomain"),
    ("https://jobs.heise.de/", C, DROPPED, "'heise jobs' subdomain"),
    ("https://preisvergleich.heise.de/?ccpid=hocid-pvgmodul&cs_id=1206858352", C, DROPPED,
     "price comparison home with a query only"),
    ("https://social.heise.de/@heiseonline", C, DROPPED, "Mastodon profile on a subdomain"),
    ("https://business-services.heise.de/security/bedrohungen-schwachstellen/beitrag/"
     "ueberleben-im-neuen-zeitalter-automatisierter-cyberangriffe-5023/?source=hbsadersatz", C,
     DROPPED, "article ('beitrag') on the business-services subdomain"),
    ("https://www.telepolis.de/", O, DROPPED, "sister magazine on its own domain"),
    ("https://heise-academy.de/", O, DROPPED, "look-alike domain heise-academy.de"),
    ("https://www.heise-gruppe.de/presse/", O, DROPPED, "publisher group domain"),
    ("https://t3n.de/news/big-tech-unter-zugzwang-wie-viele-wachstumstricks-stecken-im-ki-boom-"
     "1731252/", O, DROPPED, "an article, but of another site"),
    ("https://pubads.g.doubleclick.net/gampad/clk?id=7215153328&iu=%2F6514%2FClicktracking%2FusAd",
     O, DROPPED, "ad click tracker"),
    ("https://heiseshow.podigee.io/episodes", O, DROPPED, "podcast hoster"),
    ("https://de.linkedin.com/company/heiseonline", O, DROPPED, "social profile"),
]

SINA_ = "http://www.sina.com.cn"
SINA = [
    (f"{SINA_}/mid/ask/list.shtml", D, NODE, "'往期回顾' archive list of the Q&A column"),
    (f"{SINA_}/mid/ask/2018-08-07/doc-ihhkuskt1296305.shtml", D, CONTENT,
     "article on the home host itself (http link on the https page)"),
    (f"{SINA_}/mid/hot/2018-08-08/doc-ihhkuskt5786223.shtml", D, CONTENT, "hot-topic article"),
    (f"{SINA_}/mid/search-list.shtml", D, NODE, "'热词排行' ranking list"),
    (f"{SINA_}/midpage/mobile/index.d.html?docID=hhkuskt5213486&url=news.sina.cn%2Fgn%2F"
     "2018-08-08%2Fdetail-ihhkuskt5213486.d.html", D, CONTENT,
     "one article shown in a wrapper page: 21 links share the path, only the query differs"),
    (f"{SINA_}/midpage/mobile/index.d.html?url=photo.sina.cn%2Falbum_1_86523_310129.htm%3F"
     "ch%3D1", D, CONTENT, "wrapper of one photo album, query-only difference"),
    (f"{SINA_}/contactus.html", H, DROPPED, "'联系我们'"),
    (f"{SINA_}/intro/lawfirm.shtml", D, DROPPED, "'网站律师'"),
    (f"{SINA_}/licence/news.shtml", D, DROPPED, "news licence page"),
    (f"{SINA_}/licence/3.html", D, DROPPED, "licence page with a numeric name"),
    (f"{SINA_}/license/dx000007.html", D, DROPPED,
     "'电信与信息服务业务经营许可证000007号': licence number in the file name, not an article id"),
    ("http://news.sina.com.cn/", C, NODE, "news subdomain home: a channel on a sister host"),
    ("https://news.sina.com.cn/society/", C, NODE, "https link to a news channel"),
    ("http://news.sina.com.cn/world/", C, NODE, "'国际' channel"),
    ("http://mil.news.sina.com.cn/", C, NODE, "'军事': a sub-subdomain, same sina.com.cn"),
    ("http://news.sina.com.cn/c/2018-08-08/doc-ihhkuskt7577970.shtml", C, CONTENT,
     "news article on news.sina.com.cn"),
    ("http://news.sina.com.cn/gov/xlxw/2018-08-08/doc-ihhkuskt5955184.shtml", C, CONTENT,
     "politics article, deeper path"),
    ("http://mil.news.sina.com.cn/china/2018-08-08/doc-ihhkuskt6065272.shtml", C, CONTENT,
     "military article on a sub-subdomain"),
    ("http://finance.sina.com.cn/stock/s/2018-08-08/doc-ihhkuskt4762933.shtml", C, CONTENT,
     "finance article"),
    ("http://finance.sina.com.cn/zl/bank/2018-08-07/zl-ihhkuskt3496329.shtml", C, CONTENT,
     "column article (zl-)"),
    ("http://sports.sina.com.cn/zl/football/2018-08-07/zldoc-ihhkusks9025407.shtml", C, CONTENT,
     "href ends with a space (stripped)"),
    ("http://auto.sina.com.cn/news/hy/2018-08-08/detail-ihhkuskt5104080.shtml", C, CONTENT,
     "auto article (detail-)"),
    ("http://fashion.sina.com.cn/style/man/2018-08-07/1712/doc-ihhkuskt1734656.shtml", C, CONTENT,
     "date plus time directory"),
    ("http://jiaju.sina.com.cn/news/j/20180807/6432418974470046666.shtml", C, CONTENT,
     "compact date directory, long numeric id"),
    ("http://bj.house.sina.com.cn/news/2018-08-07/16306432513196426572044.shtml", C, CONTENT,
     "Beijing real-estate article, sub-subdomain"),
    ("http://slide.news.sina.com.cn/c/slide_1_2841_310186.html", C, CONTENT, "news photo gallery"),
    ("http://video.sina.com.cn/p/ent/doc/2018-08-08/092368966564.html", C, CONTENT,
     "video news item"),
    ("http://k.sina.com.cn/article_1806167241_6ba7ecc9001007yhe.html?from=auto&subch=nauto", C,
     CONTENT, "self-media article with query"),
    ("http://blog.sina.com.cn/s/blog_6aae01540102xykw.html", C, CONTENT, "blog post"),
    ("http://blog.sina.com.cn/s/blog_64d61f9a0102xwy3.html", C, CONTENT,
     "blog post '4名儿童在家烤火身亡': same URL scheme, but the hex id has no 5-digit run"),
    ("http://blog.sina.com.cn/s/articlelist_1592667583_9_1.html", C, NODE,
     "a blog's article list ('恐怖连载'), not a post"),
    ("http://blog.sina.com.cn/", C, NODE, "blog home"),
    ("http://auto.sina.com.cn/zt_d/car20180807/", C, NODE,
     "'蔚来小鹏互怼你pick谁' special-topic page (zt_d), a date inside the directory name"),
    ("http://finance.sina.com.cn/roll/index.d.html?lid=1004", C, NODE, "rolling news list"),
    ("http://tech.sina.com.cn/mobile/tag/%E6%9C%BA%E6%99%BA%E5%A0%82", C, NODE,
     "tag page '机智堂', percent-encoded Chinese"),
    ("http://history.sina.com.cn/news/list/20.shtml", C, NODE, "numbered list page '独家'"),
    ("http://roll.sports.sina.com.cn/sportsori/index.shtml", C, NODE,
     "'更多>>' rolling index on roll.sports., a host below the editorial sports."),
    ("http://edu.sina.com.cn/gaokao", C, NODE, "'高考' channel without slash"),
    ("http://data.auto.sina.com.cn/", C, DROPPED,
     "href 'http://data.auto.sina.com.cn/#global:::orderby=pv…': fragment dropped"),
    ("http://sax.sina.com.cn/click?sign=423b0ef0acbb446d&t=REowMDAwNjE5NA%3D%3D&type=nonstd&url="
     "http%3A%2F%2Fwww.zhsp.gov.cn%2F", C, DROPPED, "ad click redirector on a sina host"),
    ("http://eladies.sina.com.cn/feel/xinli/2018-08-08/0848/doc-ifyqyqni3272742.shtml%C2%A0%C2%A0",
     C, CONTENT, "href ends with two U+00A0: not ASCII whitespace, so kept (percent-encoded) as "
     "a browser does"),
    ("http://med.sina.com/health/article_detail_101_1_1356.html", O, DROPPED,
     "sina.com is not sina.com.cn: outward although an article"),
    ("http://english.sina.com/", O, DROPPED, "sina.com"),
    ("http://tianqitong.sina.cn/", O, DROPPED, "sina.cn is another registered domain"),
    ("https://k.sina.cn/article_5230798105_137c7a51902000c769.html?frompc=1&http=fromhttp"
     "&sinawapsharesource=newsapp&wm=13500_0055", O, DROPPED, "article on sina.cn: outward"),
    ("http://weibo.com/", O, DROPPED, "weibo"),
    ("http://m.weibo.com/web/cellphone.php", O, DROPPED, "href has '#iphone', dropped"),
    ("http://www.leju.com/", O, DROPPED, "href 'http://www.leju.com/#source=pc_sina_tydh1…'"),
    ("http://news.leju.com/2018-08-08/6432747205148589876.shtml", O, DROPPED,
     "partner's article on leju.com"),
    ("http://www.12377.cn/", O, DROPPED, "reporting centre, .cn"),
    ("http://www.miibeian.gov.cn/", O, DROPPED, "ICP licence, gov.cn"),
]

QQ_ = "http://www.qq.com"
QQ = [
    (f"{QQ_}/", H, NODE, "'腾讯网' logo: http link to the https page itself"),
    (f"{QQ_}/map/", D, NODE, "'全部' site map"),
    (f"{QQ_}/privacy.htm", H, DROPPED, "privacy policy"),
    (f"{QQ_}/icp.shtml", H, DROPPED, "ICP licence"),
    (f"{QQ_}/sheweishouye.htm", H, DROPPED, "'设为首页' help page"),
    ("http://news.qq.com/", C, NODE, "news subdomain home"),
    ("http://sports.qq.com/cba", C, NODE, "'CBA' channel"),
    ("http://ent.qq.com/movie/", C, NODE, "'电影' channel"),
    ("http://news.qq.com/society_index.shtml", C, NODE, "'社会' channel index"),
    ("http://fashion.qq.com/beauty/beauty_list.htm", C, NODE, "'美容' list"),
    ("https://news.qq.com/a/20180205/004622.htm", C, CONTENT, "href has '#p=1', dropped"),
    ("http://ent.qq.com/a/20180204/010321.htm", C, CONTENT, "two hrefs with '#p=1', one link"),
    ("http://sports.qq.com/a/20180205/000635.htm", C, CONTENT, "href ends with a space"),
    ("http://cul.qq.com/a/20180205/006355.htm", C, CONTENT, "href ends with a newline"),
    ("http://rufodao.qq.com/a/20180205/012509.htm", C, CONTENT, "href starts with a space"),
    ("http://finance.qq.com/a/20180205/010611.htm", C, CONTENT, "finance article"),
    ("http://astro.fashion.qq.com/a/20180205/003633.htm", C, CONTENT, "sub-subdomain article"),
    ("http://news.house.qq.com/a/20180205/003978.htm", C, CONTENT, "sub-subdomain article"),
    ("http://new.qq.com/omn/20180205/20180205A06YN5.html", C, CONTENT, "new.qq.com article"),
    ("http://new.qq.com/omn/20180204A0IK1B00", C, CONTENT, "article id without extension"),
    ("http://new.qq.com/omn/NEW2018020501473605", C, CONTENT, "article id with channel prefix"),
    ("http://new.qq.com/cmsn/20180205/20180205005655", C, CONTENT, "cmsn article"),
    ("http://view.inews.qq.com/a/20180205A0M23P00", C, CONTENT, "inews article"),
    ("http://view.inews.qq.com/a/20180131A1EYGP00?pacclick=%2Fpac%2Frebangapi", C, CONTENT,
     "inews article with a query"),
    ("http://dajia.qq.com/original/category/yyt180204.html", C, CONTENT,
     "'云也退：水一样的犹太人流入美利坚': column article"),
    ("http://news.qq.com/original/oneday/2958.html", C, CONTENT,
     "'工程师返乡种水果又考博': original feature, short numeric id"),
    ("http://news.qq.com/original/eyan/ey156.html", C, CONTENT,
     "'这个国家没红绿灯…': original feature, short id"),
    ("http://gy.qq.com/original/guyu_lab/lab085.html", C, CONTENT,
     "'了不起的茅侃侃…': Guyu feature, short id"),
    ("http://view.news.qq.com/original/intouchtoday/n4157.html", C, CONTENT,
     "'今日话题' column piece, short id"),
    ("https://v.qq.com/x/cover/te16jrp0mbc7cc2/m054506iqk6.html", C, CONTENT,
     "video news item '母亲坐高铁忘带手机…'"),
    ("https://v.qq.com/x/cover/te16jrp0mbc7cc2/m0545ohup0f.html", C, CONTENT,
     "video news item '情侣违规进山…', same scheme, opaque id without a digit run"),
    ("https://v.qq.com/x/page/f0546gkvcap.html", C, CONTENT, "video news item '吴亦凡献歌…'"),
    ("http://rufodao.qq.com/l/ruxue/gushengjinxian/list201511416042.htm", C, NODE,
     "'圣贤' list page (list + id in the name)"),
    ("http://news.qq.com/zt2017/2017ztqt/lswl.htm", C, NODE, "special-topic page"),
    ("http://news.qq.com/zt2018/2018hjdlw/pc.htm", C, NODE, "special-topic page"),
    ("http://games.qq.com/tencent/lol/zt/2018lplcjs/index.html", C, NODE,
     "live-event special page"),
    ("http://v.qq.com/x/list/variety?offset=0", C, DROPPED, "video list with a query"),
    ("http://v.qq.com/download.html", C, DROPPED, "href 'http://v.qq.com/download.html#pc'"),
    ("http://time.qq.com/?pgv_ref=qqcom", C, NODE, "host root with a query only"),
    ("http://lol.qq.com/index.shtml?ADTAG=media.innerenter.qqcom.index_navigation", C, DROPPED,
     "game site index with a tag parameter"),
    ("http://data.auto.qq.com/car_serial/1477/", C, DROPPED, "car model page"),
    ("http://class.qq.com/category/165.html", C, DROPPED, "course category"),
    ("https://support.qq.com/products/4312", C, DROPPED, "feedback page"),
    ("http://www.tencent.com/", O, DROPPED, "tencent.com is not qq.com"),
    ("https://www.tencent.com/zh-cn/articles/8003451510737482.pdf", O, DROPPED,
     "results PDF on tencent.com"),
    ("http://vip.qzone.com/", O, DROPPED, "qzone.com"),
    ("http://www.weiyun.com/index.html", O, DROPPED, "weiyun.com"),
    ("https://www.sogou.com/?pid=sogou-wsse-3f7bcd0b3ea82268-0001", O, DROPPED, "search partner"),
    ("http://dc2.jd.com/auto.php?from=dmp&kid=72&klid=11726&service=transfer&to=http%3A%2F%2F"
     "www.jd.com&type=dmp", O, DROPPED, "shopping redirector"),
    ("http://www.12377.cn/", O, DROPPED, "reporting centre"),
    ("http://szwljb.gov.cn/", O, DROPPED, "gov.cn"),
    ("http://report.12377.cn:13225/toreportinputNormal_anis.do", O, DROPPED, "host with a port"),
]

SOHU = [
    ("http://www.sohu.com/", H, NODE, "relative '/': the page itself"),
    ("http://news.sohu.com/", C, NODE, "'//news.sohu.com/' takes the page's scheme, http"),
    ("http://society.sohu.com/", C, NODE, "'//society.sohu.com' (no path) → '/' added"),
    ("http://business.sohu.com/994", C, NODE, "'//business.sohu.com/994' channel '宏观'"),
    ("http://sports.sohu.com/nba.shtml", C, NODE, "'//sports.sohu.com/nba.shtml' channel"),
    ("http://tv.sohu.com/drama/us/", C, DROPPED, "'//tv.sohu.com/drama/us/' 美剧 list"),
    ("http://www.sohu.com/a/245894415_115207", D, CONTENT,
     "'//www.sohu.com/a/245894415_115207': article on the home host"),
    ("http://www.sohu.com/a/245901189_656058?_f=index_select_0", D, CONTENT,
     "'//www.sohu.com/a/…?_f=index_select_0' article with a position parameter"),
    ("http://www.sohu.com/c/17", D, NODE, "'//www.sohu.com/c/17' '自媒体' channel"),
    ("http://ie.sogou.com/", O, DROPPED, "'//ie.sogou.com': sogou.com is another domain"),
    ("http://qf.56.com/", O, DROPPED, "'//qf.56.com/'"),
    ("http://www.17173.com/", O, DROPPED, "'//www.17173.com'"),
]

ZEIT = [
    ("https://quiz.zeit.de/-/teaser/daily?embedded=", F, NODE,
     "<iframe> of the daily quiz, served by zeit.de: fetched with the page "
     "('?embedded' canonicalised to '?embedded=')"),
    ("https://www.googletagmanager.com/ns.html?id=GTM-MH96D5", F, DROPPED,
     "<iframe> of a tag manager on another domain: not fetched"),
]

SZ_SPORT = [
    (f"{SZ}/sport-liveticker/iframe/matchbar/fussball/deutschland-bundesliga", F, NODE,
     "<iframe> match bar served by the site (two iframes, one link)"),
    (f"{SZ}/sport-liveticker/iframe/spielplan-scoreboard/deutschland-bundesliga/"
     "deutschland-2-bundesliga/", F, NODE, "<iframe> scoreboard"),
    (f"{SZ}/", U, DROPPED, "logo: the home page is above /sport/"),
    (f"{SZ}/politik", C, NODE, "same host, another branch of the path tree: a channel"),
    (f"{SZ}/thema/Bundesliga", C, NODE, "topic page on another branch"),
    ("https://sz-magazin.sueddeutsche.de/sagen-sie-jetzt-nichts/alexandra-popp-frauenfussball-"
     "fussball-wm-interview-ohne-worte-92885", C, CONTENT, "article on another host"),
    (f"{SZ}/projekte/artikel/sport/podcast-weltrekord-florence-griffith-joyner-100-meter-olympia-"
     "leichtathletik-flojo-e984143/", C, CONTENT, "article on another branch of the same host"),
]

TABLES: dict[str, list[tuple[str, str, str, str]]] = {
    "sueddeutsche": SUEDDEUTSCHE,
    "heise": HEISE,
    "sina": SINA,
    "qq": QQ,
    "sohu": SOHU,
    "zeit": ZEIT,
    "sueddeutsche_sport": SZ_SPORT,
}

#: Proposed classifier fixes (ids used by :data:`KNOWN_WRONG`; the last three are measured only
#: by ``benchmarks/linkclass_quality.py``, on the set 08 / set 11 data). All concern
#: ``is_article_shaped`` except 'one-entry-per-host' (``classify_page``).
FIXES: dict[str, str] = {
    "tag-dir": "a URL with a taxonomy directory among its ancestors (tag(s), topic(s), "
               "thema/themen, keyword(s), schlagwort(e), author(s), autor(en)) is never "
               "article-shaped: sz-magazin …/tag/das-kreuz-mit-den-worten/, news.163.com/"
               "keywords/…, new.qq.com/omn/author/…",
    "list-name": "a last segment whose stem is a list/index name, optionally numbered "
                 "(^[a-z]*list|index, then [_-]?digits; or ending in _list) is never "
                 "article-shaped: articlelist_1592667583_9_1.html, list201511416042.htm",
    "opaque-id": "a last segment (no trailing slash) that is one 7-24 character letters+digits "
                 "token, optionally after 'word_', is article-shaped when its parent segment is "
                 "a 4+-word slug (…-im-test/2dxtvlp) or when it has 10+ characters, 2+ digits, "
                 "2+ letters and 3+ letter/digit runs (blog_64d61f9a0102xwy3, m0545ohup0f, "
                 "FGN4GBNK0519EO06)",
    "service-page": "a URL under a service directory (license, licence, legal, about, impressum, "
                    "datenschutz, privacy, agb, contact, kontakt, imprint, terms) or whose last "
                    "segment starts with such a word (Datenschutzerklaerung-…-4860.html) is "
                    "never article-shaped",
    "trailing-slash-number": "for a path ending with '/', a 5+ digit run makes it article-"
                             "shaped only when the segment is all digits or has separators "
                             "(…/80238/, …-e568822/), not a glued word+digits name "
                             "(zt_d/car20180807/)",
    "short-id-in-feature-dir": "a short id file (2958.html, ey156.html, lab085.html) under an "
                               "editorial feature directory (linkclass.FEATURE_DIRS: 'original') "
                               "is article-shaped",
    "article-in-service-area": "an article-shaped page below an editorial part of a service "
                               "area (linkrules.EDITORIAL_DIRS: /download/specials/<comparison>-"
                               "3798036) is news; /download/product/<tool>-59349 stays a "
                               "download page",
    "one-entry-per-host": "key crosswise entries by host, not by scheme+host: http:// and "
                          "https:// links to one host give one entry (sina: news, tech, tousu; "
                          "qq: news, v, guanjia)",
    "media-extension": "a last segment with a media/asset extension (.mp4 .flv .jpg .png .gif "
                       ".pdf .zip .js .css .json …) is never article-shaped",
    "index-of-slug": "an index name (index.html) under a dated path is the article of its "
                     "parent directory: cnn …/2013/12/17/politics/senate-budget-deal/index.html",
    "comment-host": "links on a host whose first label is comment/comments are never "
                    "article-shaped (comment.tie.163.com/<docid>.html)",
}

#: Rows where today's classifier disagrees with the table: page → URL → fix id (xfail strict).
KNOWN_WRONG: dict[str, dict[str, str]] = {
    # The fixes tag-dir, list-name, opaque-id, service-page, trailing-slash-number,
    # media-extension, index-of-slug, comment-host, one-entry-per-host and (issue 10)
    # short-id-in-feature-dir and article-in-service-area are in linkclass.py / linkrules.py.
}

#: Sister hosts each page must follow: a node link to a channel there or its ``scheme://host/``
#: entry (checked by host, whatever the scheme).
EXPECTED_FOLLOWED_HOSTS: dict[str, set[str]] = {
    "sueddeutsche": {"sz-magazin.sueddeutsche.de", "projekte.sueddeutsche.de"},
    "heise": set(),
    "sina": {"news.sina.com.cn", "mil.news.sina.com.cn", "finance.sina.com.cn",
             "sports.sina.com.cn", "blog.sina.com.cn", "k.sina.com.cn"},
    "qq": {"news.qq.com", "new.qq.com", "view.inews.qq.com", "sports.qq.com"},
}
#: Service hosts each page links and must not follow (no node link there, no entry).
NOT_FOLLOWED_HOSTS: dict[str, set[str]] = {
    "sueddeutsche": {"zeitung.sueddeutsche.de", "stellenmarkt.sueddeutsche.de",
                     "iqtest.sueddeutsche.de", "szshop.sueddeutsche.de"},
    "heise": {"shop.heise.de", "jobs.heise.de", "business-services.heise.de",
              "preisvergleich.heise.de"},
    "sina": {"login.sina.com.cn", "vip.book.sina.com.cn", "sax.sina.com.cn"},
    "qq": {"mail.qq.com", "browser.qq.com", "chuangshi.qq.com", "class.qq.com"},
}


def table_labels(name: str) -> list[tuple[str, bool]]:
    """``(url, is_content)`` of a hand table: the ground truth of content-link detection."""
    return [(url, role == CONTENT) for url, _cls, role, _note in TABLES[name]]


# --------------------------------------------------------------------------------------------
# Set 08: newspaper4k's article vs non-article URL labels
# --------------------------------------------------------------------------------------------

def newspaper4k_url_labels() -> list[tuple[str, bool]]:
    """``(url, is_article)`` from ``08_newspaper4k_testdata/test_urls.txt``.

    Format (checked): one ``<label> <url>`` per line, label ``1`` = article, ``0`` = not; URLs
    are raw hrefs and include ``javascript:`` ones (one wrapped in quotes), CDN media files and
    bare domains.
    """
    labels = []
    for line in corpus_path(SET08, "test_urls.txt").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        label, url = line.split(None, 1)
        labels.append((url.strip(), label == "1"))
    return labels


# --------------------------------------------------------------------------------------------
# Set 11: links on list pages that point at detail pages
# --------------------------------------------------------------------------------------------

#: List pages of set 11 with the URL each was saved from. The saves carry no URL (url_map.tsv
#: lists only the detail pages); each page links its own section: '国际' ``news.163.com/world/``,
#: '滚动新闻' ``news.163.com/latest/``, '要闻' ``news.qq.com/`` ('新闻中心-腾讯网').
LIST_PAGES: dict[str, str] = {
    "netease_international_news.html": "https://news.163.com/world/",
    "netease_rolling_news.html": "https://news.163.com/latest/",
    "tencent_important_news.html": "https://news.qq.com/",
}

#: Detail-page URL schemes of netease and tencent (2020), checked on the pages: all 140 headline
#: links of the netease international list (``div.news_title a``) and all 40 headlines of the
#: rolling list (``ul.list_txt``) match; the other links of those list items are their channel
#: tags (``news.163.com/shehui/`` …), and on tencent's list (``div.channel_mod ul.list li``) the
#: author pages (``new.qq.com/omn/author/…``), comment pages (``coral.qq.com/…``) and two
#: special-topic items (``new.qq.com/zt/template/?id=…``) — none of them matches. Comment pages
#: (``comment.tie.163.com``), keyword pages (``news.163.com/keywords/…``), archive-calendar links
#: (``snapshot.news.163.com/wgethtml/…``), channels and services do not match either.
DETAIL_SCHEMES = [
    re.compile(r"^https?://([a-z0-9-]+\.)*163\.com/(game/)?\d\d/\d{4}/\d\d/[0-9A-Z]{16}\.html$"),
    re.compile(r"^https?://dy\.163\.com/(v2/)?article/(detail/)?[0-9A-Z]{16}\.html$"),
    re.compile(r"^https?://([a-z0-9-]+\.)*163\.com/(photoview|photonew)/[0-9A-Z]{8}/\d+\.html$"),
    re.compile(r"^https?://new\.qq\.com/(omn|rain/a|cmsn)/(\d{8}/)?[0-9A-Z]{12,20}(\.html)?$"),
    re.compile(r"^https?://view\.inews\.qq\.com/a/[0-9A-Z]{12,24}$"),
]
#: Links that are neither clearly a detail page nor clearly not one: left out.
UNLABELLED = [
    re.compile(r"^https?://jingdian\.travel\.163\.com/"),  # scenic-spot pages
    re.compile(r"^https?://new\.qq\.com/omn/rose\.htm"),  # live text broadcast room
]


def detail_label(url: str) -> bool | None:
    """True for a detail (article) page URL of set 11's sites, False for anything else, None
    for the few left unlabelled."""
    if any(p.search(url) for p in UNLABELLED):
        return None
    return any(p.search(url) for p in DETAIL_SCHEMES)


def list_page(name: str) -> tuple[str, str]:
    """``(URL, text)`` of a set-11 list page (UTF-8 saves, some still declaring gbk)."""
    path = corpus_path(SET11, "list", name)
    return LIST_PAGES[name], _decode(path.read_bytes(), None)


def list_page_labels(name: str, **kwargs):
    """Classify a set-11 list page; return ``[(ClassifiedLink, is_detail)]`` for its labelled
    links (distinct canonical URLs)."""
    import lxml.html

    from newscrawl.algorithms.linkclass import classify_page
    from newscrawl.algorithms.linkextract import extract_links

    url, text = list_page(name)
    page = classify_page(url, extract_links(lxml.html.fromstring(text), url), **kwargs)
    out = []
    for link in page.links:
        label = detail_label(link.url)
        if label is not None:
            out.append((link, label))
    return out


def host(url: str) -> str:
    """Lower-cased host of a URL."""
    return (urlsplit(url).hostname or "").lower()
