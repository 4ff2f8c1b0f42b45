"""The roll routes, answered without Litestar's per-request handler machinery.

A roll's route is declared, documented and validated as every route is (its handler in
``api.mechanics``, its body decoded by ``strict.strict_body``, its errors by
``problems.exception_handlers``). What a routed request then goes through in Litestar
(its route's exception layer, the signature model and its kwargs, the data handler
wrapping the handler's bytes in a ``Response``, then an ``ASGIResponse``) cost a roll
about 55 µs of CPU in process, 17 % of it (``docs/performance.md``). Here the same
handler function is called with the same ``Request`` and its bytes are sent as they
are, inside the same middleware (metrics, rate limit, timeout, compute relay):

- the scope gets what Litestar's router puts in it (the app, the route handler, the
  path template), so the middleware, ``strict_body`` and the handler see one request
  either way;
- an exception is answered by the handler ``problems.exception_handlers`` names for
  its class, as Litestar's exception layer does;
- a request the router would treat differently goes to Litestar: another method, a
  path not written exactly as declared, a ``root_path``, a host header Litestar would
  refuse, or a CORS request (``Origin``), whose headers Litestar's CORS layer writes.

``tests/test_direct_routes.py`` sends the same requests, good and bad, both ways and
compares the answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from litestar import Litestar, Request
from litestar._asgi.utils import is_valid_host  # the router's own check of a host header
from litestar.handlers import HTTPRouteHandler
from litestar.types import ASGIApp, ExceptionHandlersMap, Message, Receive, Scope, Send

from fairroll.api.strict import strict_body

__all__ = ["DIRECT", "DirectRoutes"]

#: The ``opt`` key that marks a route handler to be answered here.
DIRECT = "direct"

_JSON = (b"content-type", b"application/json")


class DirectRoutes:
    """The routes marked ``opt={DIRECT: True}``, by their path, each inside ``middleware``
    (outermost first, as Litestar's ``middleware=`` list)."""

    def __init__(
        self,
        app: Litestar,
        middleware: Iterable[Callable[[ASGIApp], ASGIApp]],
        handlers: ExceptionHandlersMap,
    ) -> None:
        self._routes: dict[str, tuple[ASGIApp, HTTPRouteHandler]] = {}
        stack = list(middleware)
        for route in app.routes:
            for handler in getattr(route, "route_handlers", ()):
                if not handler.opt.get(DIRECT):
                    continue
                taken = set(handler.parsed_fn_signature.parameters)
                if handler.http_methods != {"POST"} or taken != {"data", "request"}:
                    raise ValueError(
                        f"{handler}: a direct route is a POST handler of (data, request)"
                    )
                answer = _answer(handler, handlers)
                for layer in reversed(stack):
                    answer = layer(answer)
                self._routes[route.path] = (answer, handler)
        self._cors = app.cors_config is not None

    def of(self, scope: Scope) -> tuple[ASGIApp, HTTPRouteHandler] | None:
        """The direct route of an HTTP request, or None: Litestar answers it."""
        found = self._routes.get(scope["path"])
        if found is None or scope.get("method") != "POST" or scope.get("root_path"):
            return None
        for name, value in scope["headers"]:
            if (name == b"host" and not is_valid_host(value)) or (name == b"origin" and self._cors):
                return None
        return found

    async def __call__(
        self, found: tuple[ASGIApp, HTTPRouteHandler], scope: Any, receive: Receive, send: Send
    ) -> None:
        answer, handler = found
        scope["route_handler"] = handler
        scope["path_template"] = scope["path"]
        scope["path_params"] = {}
        await answer(scope, receive, send)


def _answer(route_handler: HTTPRouteHandler, handlers: ExceptionHandlersMap) -> ASGIApp:
    """The route as an ASGI app: decode the body strictly, call the handler, send its
    bytes; an exception is answered as ``handlers`` say."""
    fn = route_handler.fn
    status = route_handler.status_code

    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        request: Request[Any, Any, Any] = Request(scope, receive, send)
        try:
            await strict_body(request)
            body: bytes = await fn(data=request._json, request=request)
        except Exception as exc:
            response = _handler_of(handlers, exc)(request, exc)
            await response.to_asgi_response(app=None, request=request)(scope, receive, send)
            return
        start: Message = {
            "type": "http.response.start",
            "status": status,
            "headers": [_JSON, (b"content-length", b"%d" % len(body))],
        }
        await send(start)
        await send({"type": "http.response.body", "body": body, "more_body": False})

    return answer


def _handler_of(handlers: ExceptionHandlersMap, exc: Exception) -> Any:
    """The handler of the nearest class of ``exc`` (its MRO) that ``handlers`` names."""
    for kind in type(exc).__mro__:
        found = handlers.get(kind)
        if found is not None:
            return found
    raise exc
