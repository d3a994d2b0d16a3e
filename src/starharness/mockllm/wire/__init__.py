"""A small HTTP/1.1 server side: read requests, write plain, chunked and broken responses."""

from .request import HttpRequest, MalformedHttp, read_request
from .response import ResponseWriter

__all__ = ["HttpRequest", "MalformedHttp", "ResponseWriter", "read_request"]
