"""middlewares.redirect: Scrapy's redirect middleware with counted drops."""

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response

from middlewares.redirect import CountedRedirectMiddleware
from tests.conftest import component_crawler


@pytest.mark.parametrize("location", ["http://a.example:80x/", "http://%5B::1%5D:18440/x"])
def test_an_unusable_location_is_a_counted_logged_drop_not_a_traceback(location, caplog):
    crawler = component_crawler({"NEWSCRAWL_DESTINATION_ENABLED": False})
    mw = CountedRedirectMiddleware.from_crawler(crawler)
    request = Request("http://127.0.0.1:18450/")
    response = Response(request.url, status=302, headers={"Location": location}, request=request)
    with pytest.raises(IgnoreRequest, match="unusable redirect Location"):
        mw.process_response(request, response)
    assert crawler.stats.get_value("newscrawl/redirect/bad_location") == 1
    assert "Not following the redirect of http://127.0.0.1:18450/: unusable Location" in caplog.text
