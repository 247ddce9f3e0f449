"""How the fully labelled link tables (``tests/linkclass_labels.tsv``) were made.

Ten real home / channel pages (:data:`LABELLED_PAGES`) have *every* link labelled ``article``,
``channel`` or ``other``. The labels are the ground truth of ``benchmarks/linkclass_quality.py``
(content-link and channel-link precision / recall) and are kept in the repository as a table of
``page, label, url`` rows; the pages themselves stay in ``../shared/corpus``.

Definitions (what a news-monitoring analyst wants the crawler to do with the link):

- ``article``: one news item — an article, report, interview, column piece, review or test
  report, live blog, photo gallery, video news item, podcast episode page, blog post — on the
  page's site (same registered domain, Public Suffix List).
- ``channel``: a page of the site whose purpose is to lead to articles: the home page of the site
  or of a sister host, sections and subsections, topic / tag / series / author pages, news
  tickers, rolling lists, archives, pagination, site maps and special-topic pages that list
  articles.
- ``other``: everything else: links to other registered domains (the crawl stays on the site),
  service pages (imprint, privacy, contact, help, consent, licences, ICP notices), accounts and
  logins, subscriptions and shops, jobs, price comparison and vouchers, games / puzzles / quizzes
  / tests, tools and downloads, sponsored and advertising pages, comment threads, forums, TV /
  video-on-demand programme pages (a series or a film, not a news item), sports results tables,
  data / product / quote pages, media files, frames.

Rules: each site's URL schemes were read off the page (anchor text, the block the link sits in)
and written down below as ordered ``(label, pattern)`` rules — the first matching pattern
decides; every link of a page must match one, or :func:`label_page` raises. These rules are not
the classifier's: they name the sites' own URL schemes (``/YYYY/NN/<slug>`` is zeit.de's print
issue, ``coral.qq.com/<id>`` Tencent's comment threads …); a rule for one site says nothing
about another. Host roots the classifier may add as crosswise entries (``https://host/``) are
labelled too (kind ``root``; links are kind ``link``), so every node request the crawl can make
from the page has a label.

Regenerate the table (after checking a changed rule by reading the page)::

    .venv/bin/python tests/linkclass_labelling.py --write
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

ARTICLE, CHANNEL, OTHER = "article", "channel", "other"
LABELS = (ARTICLE, CHANNEL, OTHER)
TABLE = Path(__file__).resolve().parent / "linkclass_labels.tsv"

#: page name → (page URL, corpus path relative to the corpus, WARC?) — see linkclass_tables.PAGES
#: for the first seven; the last three are added there.
LABELLED_PAGES = ("sueddeutsche", "sueddeutsche_sport", "zeit", "zeit_news", "heise",
                  "heise_newsticker", "sina", "sohu", "qq", "tencent_news")

_MEDIA = re.compile(r"\.(?:mp3|mp4|m4a|pdf|jpe?g|png|gif|zip|apk|exe)(?:$|\?)", re.I)


def _rules(*rows: tuple[str, str]) -> list[tuple[str, re.Pattern[str]]]:
    return [(label, re.compile(pattern)) for label, pattern in rows]


A, C, O = ARTICLE, CHANNEL, OTHER

SITE_RULES: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    "sueddeutsche.de": _rules(
        # services and products
        (O, r"//(?:stellenmarkt|iqtest|quiz|adventskalender|fuehrerschein|produkte|szshop|"
            r"zeitung)\.sueddeutsche\.de/"),  # zeitung. = e-paper reader app
        (O, r"\.de/(?:gutscheine|raetsel|app/spiele|sport-liveticker|consent|agb|impressum|"
            r"datenschutz|mediadaten|jobs|karriere|newsletter-|updates-|utiq-|meinesz)"),
        # articles: lux./li./dpa./1.NNNNNNN ids, storytelling e-ids, SZ-Magazin -NNNNN
        (A, r"www\.sueddeutsche\.de/.+-(?:lux\.[A-Za-z0-9]+|li\.\d+|dpa\.urn-.+|1\.\d{6,})$"),
        (A, r"sueddeutsche\.de/(?:projekte/)?artikel/[^/]+/[^/]+-e\d{6}/?$"),
        (A, r"//sz-magazin\.sueddeutsche\.de/[^/]+/[^/]+-\d{5}$"),
        # channels: home, sections, local sections, topics, news lists, magazine, SZ Plus
        (C, r"//www\.sueddeutsche\.de/(?:[a-z-]+(?:/[a-z-]+)?)?$"),
        (C, r"//www\.sueddeutsche\.de/thema/[^/]+$"),
        (C, r"//www\.sueddeutsche\.de/news\?"),
        (C, r"//(?:sz-magazin|plus|projekte)\.sueddeutsche\.de/(?:tag/[^/]+/?)?$"),
    ),
    "zeit.de": _rules(
        (O, r"//(?:shop|abo|jobs|premium|meine|datenschutz|verlag|spiele|sudoku|quiz|"
            r"community|inserieren|partnersuche|studiengaenge|berufstest|zeitreisen|z2x|"
            r"cmk)\.zeit\.de/"),
        (O, r"zeit\.de/(?:administratives|angebote|campus/angebote|zett/angebote|hilfe|"
            r"impressum|newsletter|spiele|schach)"),
        # articles: /<section>[/<sub>]/YYYY-MM/<slug>, print issue /YYYY/NN/<slug>, news ticker
        # /news/YYYY-MM/DD/<slug>, video /video/YYYY-MM/<id>/<slug>, live blogs
        (A, r"zeit\.de/(?:[a-z-]+/){0,2}\d{4}-\d\d/(?:\d\d/|\d{10,}/)?[a-z0-9-]+$"),
        (A, r"zeit\.de/(?:[a-z-]+/)?\d{4}/\d\d/[a-z0-9-]+$"),
        (A, r"zeit\.de/politik/ausland/[a-z0-9-]+-newsblog-live$"),
        # channels: index pages, sections, topics, series (podcast / column series), weekend
        # issue pages, news lists, podcasts overview, data desk
        (C, r"//www\.zeit\.de/(?:[a-z0-9-]+/){0,2}index$"),
        (C, r"//www\.zeit\.de/(?:thema|serie|schwerpunkte)/[a-z0-9-]+$"),
        (C, r"//www\.zeit\.de/(?:sport|podcasts|10nach8|daten-und-visualisierung|"
            r"exklusive-zeit-artikel)$"),
        (C, r"//www\.zeit\.de/news/(?:nachrichten|regionalnachrichten)$"),
        (C, r"//www\.zeit\.de/wochenende/\d{4}/\d\d(?:hp)?$"),
    ),
    "heise.de": _rules(
        (O, r"//(?:business-services|compaliate|it-kenner|jobs|mediadaten|preisvergleich|"
            r"shop|social|spiele)\.heise\.de/"),  # it-kenner / business-services: sponsored
        (O, r"//heise\.de/-b\d+$"),  # a word game ('Sie haben sechs Versuche')
        (O, r"heise\.de/(?:Datenschutzerklaerung|account|benachrichtigungen|download/(?:$|product|"
            r"search)|forum|impressum|kontakt|loseblattwerke|meinabo|newsletter|plus/abo|select|"
            r"tarifrechner|tools|newsticker/meine-themen|newsticker/\$|netze/netzwerk-tools)"),
        (A, r"heise\.de/.+-\d{6,}(?:\.html)?$"),
        (A, r"heise\.de/-\d{6,}$"),
        (A, r"heise\.de/bestenlisten/.+/[a-z0-9]{7}$"),
        (C, r"//(?:www\.)?heise\.de/(?:\?p=\d+)?$"),
        (C, r"//www\.heise\.de/(?:[a-z-]+/?){1,2}$"),
        (C, r"//www\.heise\.de/newsticker/seite-\d+/$"),
        (C, r"//www\.heise\.de/thema(?:\?p=\w+|/[A-Za-z0-9-]+)?$"),
    ),
    "sina.com.cn": _rules(
        # services, products, data and tools
        (O, r"//(?:login|vote|tousu|touzi|ka|zhongce|open|vip\.book|vip\.stock\.finance|"
            r"live\.finance|db\.auto|data\.auto|product\.astro|sax|zx\.jiaju|anli\.jiaju|"
            r"iask|help|weather|tianqi|lottery|sinalottery|caipiao|mail|game|g|"
            r"wanwan|kan|app|m|dealer\.auto|price\.auto|career|emarketing|kf\.games|search|"
            r"designer\.jiaju|jiancai\.jiaju|91\.jiaju|data\.auto)\.sina\.com\.cn/"),
        (O, r"//www\.sina\.com\.cn/intro/"),
        (O, r"sina\.com\.cn/(?:contactus|licen[cs]e|ad/|guest|corp/|sina\.html|"
            r"aboutsina|sitemap|city/Declaration)"),
        (O, r"//fashion\.sina\.com\.cn/try/"),  # product trials
        (O, r"//(?:api\.ggt|jiaoyi|zhibo|fund|licaishi|drug\.health|corp|touzi|lottery)\.sina\.com\.cn/"),
        (O, r"sina\.com\.cn/(?:mobile/comfinanceweb|forex/paijia|realstock/|money/future/[A-Z]+/"
            r"quote|money/forex/hq/|hd\.shtml|jump\.shtml)"),  # apps, quotes, redirects
        (A, r"//games\.sina\.com\.cn/o/kb/\d+\.shtml$"),
        (A, r"//dj\.sina\.com\.cn/(?:[a-z]+/)?article/[a-z0-9]+\.shtml$"),  # esports news
        (A, r"//aipai\.sina\.com\.cn/(?:activity_)?album/detail/\d+/$"),  # one photo album
        (O, r"//kaoshi\.edu\.sina\.com\.cn/college/"),  # college / score database
        (C, r"//dj\.sina\.com\.cn/esports/[a-z]+\.shtml$"),
        # articles: dated doc-/zl-/detail-/zldoc- pages, long numeric ids, galleries, blog posts,
        # self-media articles, video items, article wrappers
        (A, r"sina\.com\.cn/.*(?:19|20)\d\d-?\d\d-?\d\d/.*[a-z0-9_-]+\.s?html?"),
        (A, r"sina\.com\.cn/.*/\d{8,}\.s?html?$"),
        (A, r"//slide\.[a-z.]*sina\.com\.cn/.*slide_\d+_\d+_\d+\.html"),
        (A, r"//blog\.sina\.com\.cn/s/blog_[0-9a-z]+\.html"),
        (A, r"//k\.sina\.com\.cn/article_\d+_[0-9a-z]+\.html"),
        (A, r"//www\.sina\.com\.cn/midpage/mobile/index\.d\.html\?"),
        (A, r"//www\.sina\.com\.cn/mid/[a-z]+/\d{4}-\d\d-\d\d/doc-"),
        # channels: host roots, directories, index / list / rolling pages
        (C, r"//[a-z0-9.]*sina\.com\.cn/(?:[a-z0-9_-]+/)*(?:index(?:\.d)?\.s?html?)?(?:\?.*)?$"),
        (C, r"//[a-z0-9.]*sina\.com\.cn/(?:[a-z0-9_-]+/)*[a-z_]*list[a-z_0-9-]*\.s?html?(?:\?.*)?$"),
        (C, r"//[a-z0-9.]*sina\.com\.cn/[a-z0-9_-]+$"),
        (C, r"//[a-z0-9.]*sina\.com\.cn/(?:[a-z0-9_-]+/)+[a-z0-9_%A-F-]+$"),  # /lm/history, tag/…
        (C, r"//[a-z0-9.]*sina\.com\.cn/(?:[A-Za-z0-9_-]+/)+$"),  # hotnews/…/Daily/
        (C, r"//[a-z0-9.]*sina\.com\.cn/(?:[a-z0-9_-]+/)*(?:index_[a-z]+|[a-z]+list|"
            r"gyzx|ngo|zhunbei|eatblog|\d{1,3})\.s?html?$"),
        (C, r"index\.shtml\.shtml$"),
        (C, r"//www\.sina\.com\.cn/mid/search-list\.shtml$"),  # '热词排行' ranking list
    ),
    "qq.com": _rules(
        # comments, products, games, software, VOD platform, novels, courses, data and quotes
        (O, r"[?&]ADTAG=media\.innerenter"),  # game sites of the 'games' navigation
        (O, r"//(?:coral|110|5s|888|act\.qzone|automall|c\.automall|baojia\.auto|data\.auto|"
            r"data\.astro|db\.house|browser|cb|chuangshi|yunqi|dushu|book|class|ke|college|"
            r"dldir1|fans\.sports|film|fm|g|gaopeng|go|gu|guanjia|ilike|im|image|iwan|kb|"
            r"kuaibao|kf|kg|m|mail|map|mini|nba\.stats|open|pay|pc|piao|pim|player|py|qzone|"
            r"service|shaka|show|support|stockapp\.finance|stockhtm\.finance|tianqi|vip|"
            r"vip\.music|weather\.news|weixin|xf|xing|y|youpin|ac|meishi|fun|qian)\.qq\.com/"),
        (O, r"//(?:wuxia|x5|xycq|yxwd|tlbb|speed|pvp|nz|mxd2|lol|jxqy|hyrz|hlddz|huoying|hdl|"
            r"eafifa|dnf|dn|cf|cfm)\.qq\.com/"),
        (O, r"//v\.qq\.com/(?!x/page/|x/cover/[^/]+/[^/]+\.html|p/cross/)"),  # VOD listings
        (O, r"//www\.qq\.com/(?!map/|$)"),  # licences, policies, results press releases
        (O, r"//(?:news|house)\.qq\.com/mobile/"),  # app download pages
        (O, r"qq\.com/(?:kbs/|fans/|onlinepurchase|jiangjia\.htm|2017stock/|hkHSI|i/$|"
            r"ceshi/|06newver/|zt2014/2014qtnews/ccybspxd|ext2020/new2019/postmsg)"),
        (O, r"qq\.com/zt20\d\d/[^/]+/(?:zsyhxyk|jeep)\.html?$"),  # advertisements (anchor text)
        # articles
        (A, r"qq\.com/a/(?:\d+/)?\d{8}/[0-9A-Za-z]+\.htm"),
        (A, r"//new\.qq\.com/(?:omn|cmsn|rain/a)/(?!author/)[0-9A-Za-z]+(?:/[0-9A-Za-z]+)?"
            r"(?:\.html)?$"),
        (A, r"//new\.qq\.com/omn/rose\.htm\?"),  # live text broadcast of one event
        (A, r"//new\.qq\.com/omv/video/[0-9a-z]+$"),
        (A, r"//view\.inews\.qq\.com/a/[0-9A-Z]+(?:\?.*)?$"),
        (A, r"//v\.qq\.com/x/(?:page/[0-9a-z]+|cover/[0-9a-z]+/[0-9a-z]+)\.html"),
        (A, r"//v\.qq\.com/p/cross/\d{8}/\w+\.html$"),
        (A, r"qq\.com/original/(?:[a-zA-Z_]+/)+[a-z_]*\d+\.html$"),
        (A, r"//astro\.fashion\.qq\.com/original/\w+/\w+\.html$"),  # astrology column piece
        (A, r"//kid\.qq\.com/cross/\d{8}/\w+\.html$"),
        # channels: host roots, directories, indexes, lists, special topics, author pages
        (C, r"//[a-z0-9.]*qq\.com/(?:[A-Za-z0-9_-]+/)*(?:[a-z_]*index\.s?html?)?(?:\?.*)?$"),
        (C, r"//new\.qq\.com/(?:ch|d|omn/author)/[A-Za-z0-9_]+/?$"),
        (C, r"//new\.qq\.com/zt/template/\?id="),
        (C, r"qq\.com/(?:l/.+/list\d+|(?:[a-z]+/)?[a-z]+_list|zt20\d\d/.+|[a-z0-9_]+kid|photo|"
            r"photon/photostory/\w+|horoscope)\.s?html?$"),
        (C, r"//sports\.qq\.com/(?:cba|others/\w+\.htm)$"),
    ),
    "sohu.com": _rules(
        (O, r"//(?:00\.auto|2sc|ad|caipiao|corp|db\.auto|dealer\.auto|hr|images|"
            r"investors|jiangjia\.auto|mail|pay|popup|q\.stock|mp|my\.tv|film|v\.auto|"
            r"mote\.auto)\.sohu\.com/"),  # mp.: self-media profiles
        (O, r"//www\.sohu\.com/upload/"),  # licences
        (O, r"//tv\.sohu\.com/(?:drama|movie|show|comic|self|s\d{4})"),  # VOD programmes
        (O, r"//tv\.sohu\.com/v/.+\?txid="),  # programme guide: a TV series / show
        (O, r"//sports\.sohu\.com/upload/"),
        (A, r"//www\.sohu\.com/(?:a|picture)/\d+"),
        (A, r"//tv\.sohu\.com/(?:\d{8}/n\d+\.shtml|v/[A-Za-z0-9=]+\.html$)"),
        (C, r"//[a-z0-9.]*sohu\.com/(?:[a-z0-9_-]+/)*(?:index\.shtml)?(?:\?.*)?$"),
        (C, r"//[a-z0-9.]*sohu\.com/(?:c/)?\d+/?$"),  # numbered channels: it.sohu.com/880
        (C, r"//sports\.sohu\.com/[a-z]+\.shtml$"),
    ),
}

#: host labels of other registered domains that are the same publisher (none needed today).


def label_of(page_url: str, url: str, *, domain_of) -> str | None:
    """Label of one link of a page (None when no rule matches)."""
    site = domain_of(urlsplit(page_url).hostname or "")
    if domain_of(urlsplit(url).hostname or "") != site:
        return OTHER
    if _MEDIA.search(urlsplit(url).path):
        return OTHER
    for label, pattern in SITE_RULES.get(site, []):
        if pattern.search(url):
            return label
    return None


def page_urls(name: str) -> list[tuple[str, str]]:
    """``(url, kind)`` for every distinct canonical link URL of a labelled page (kind ``link``),
    plus ``scheme://host/`` of each other host of the site it links when the page does not link
    that root itself (kind ``root``: the crosswise entries the crawl may request)."""
    import lxml.html

    import linkclass_tables as T
    from newscrawl.algorithms.linkextract import extract_links
    from newscrawl.algorithms.urls import canonicalize_url, registered_domain

    url, text = T.load_page(name)
    raw = extract_links(lxml.html.fromstring(text), url)
    urls = list(dict.fromkeys(canonicalize_url(link.url) for link in raw))
    site = registered_domain(urlsplit(url).hostname or "")
    page_host = (urlsplit(url).hostname or "").lower()
    entries = []
    for link in urls:
        parts = urlsplit(link)
        host = (parts.hostname or "").lower()
        if host != page_host and registered_domain(host) == site:
            entries.append(canonicalize_url(f"{parts.scheme}://{parts.netloc}/"))
    linked = set(urls)
    roots = [root for root in dict.fromkeys(entries) if root not in linked]
    return [(url, "link") for url in urls] + [(root, "root") for root in roots]


def label_page(name: str) -> list[tuple[str, str, str]]:
    """``[(url, label, kind)]`` for every URL of :func:`page_urls`; raises ``ValueError`` listing
    the URLs no rule covers."""
    import linkclass_tables as T
    from newscrawl.algorithms.urls import registered_domain

    page_url = T.PAGES[name].url
    out, missing = [], []
    for url, kind in page_urls(name):
        label = label_of(page_url, url, domain_of=registered_domain)
        if label is None:
            missing.append(url)
        else:
            out.append((url, label, kind))
    if missing:
        raise ValueError(f"{name}: {len(missing)} unlabelled links:\n" + "\n".join(missing))
    return out


def read_table(path: Path = TABLE) -> dict[str, dict[str, tuple[str, str]]]:
    """page → url → (label, kind), from the committed table."""
    table: dict[str, dict[str, tuple[str, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        page, label, kind, url = line.split("\t")
        table.setdefault(page, {})[url] = (label, kind)
    return table


def main(argv: list[str]) -> int:
    """``--write``: write the table; otherwise list unlabelled links and label counts."""
    root = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(root), str(root / "tests")]
    rows, failed = [], False
    for name in LABELLED_PAGES:
        try:
            labelled = label_page(name)
        except ValueError as exc:
            print(exc)
            failed = True
            continue
        counts = {label: sum(1 for _, lab, _kind in labelled if lab == label) for label in LABELS}
        print(name, len(labelled), counts)
        rows += [f"{name}\t{label}\t{kind}\t{url}" for url, label, kind in labelled]
    if "--write" in argv and not failed:
        header = ("# page\tlabel\tkind\turl — kind: link (on the page) or root (a sister host's root"
                  " the page does not link); rules: tests/linkclass_labelling.py\n")
        TABLE.write_text(header + "\n".join(rows) + "\n", encoding="utf-8")
        print(f"wrote {TABLE} ({len(rows)} rows)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
