"""A small HTTP/1.1 server side: read requests, write plain, chunked and broken responses."""

from .request import HttpRequest, MalformedHttpError, read_request
from .response import ResponseWriter

__all__ = ["HttpRequest", "MalformedHttpError", "ResponseWriter", "read_request"]
