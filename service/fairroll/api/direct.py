"""The roll routes, answered without Litestar's per-request handler machinery.

A roll's route is declared, documented and validated as every route is (its handler in
``api.controllers.systems``, its body decoded by ``strict.strict_body``, its errors by
``problems.exception_handlers``). What a routed request then goes through in Litestar
(its route's exception layer, the signature model and its kwargs, the data handler
wrapping the handler's bytes in a ``Response``, then an ``ASGIResponse``) is a part
of a roll's CPU worth saving (``benchmarks/roll_cost.py``, ``docs/performance.md``).
Here the same handler function is called with the same ``Request`` and its bytes are
sent as they are, with what Litestar resolves for that handler from its layers: the same middleware
(metrics, rate limit, timeout, compute relay), ``before_request`` hook and exception
handlers; a handler that needs more is refused at startup (``_check``):

- the scope gets what Litestar's router puts in it (the app, the route handler, the
  path template), so the middleware, ``strict_body`` and the handler see one request
  either way;
- an exception is answered by the exception handler Litestar's exception layer would
  pick: its status code's, else its nearest class's, else (not an HTTP error) 500's;
- a request the router would treat differently goes to Litestar: another method, a
  path not written exactly as declared, a ``root_path``, a host header Litestar would
  refuse, or a CORS request (``Origin``), whose headers Litestar's CORS layer writes.

``tests/test_direct_routes.py`` sends the same requests, good and bad, both ways and
compares the answers.
"""

from __future__ import annotations

import re
from typing import Any

from litestar import Litestar, Request
from litestar.exceptions import HTTPException
from litestar.handlers import HTTPRouteHandler
from litestar.types import ASGIApp, ExceptionHandlersMap, Message, Receive, Scope, Send

__all__ = ["DIRECT", "DirectRoutes"]

#: The ``opt`` key that marks a route handler to be answered here.
DIRECT = "direct"

_JSON = (b"content-type", b"application/json")
#: A host header Litestar's router takes (RFC 3986's reg-name, IP literal and port
#: characters). Litestar's own check is private (``_asgi.utils``); a hypothesis test in
#: ``tests/test_direct_routes.py`` holds this copy to it, and fails if it moves or changes.
_HOST = re.compile(rb"\A[0-9A-Za-z!$&'()*+,;=\-._~:\[\]@%]*\Z", re.IGNORECASE)


class DirectRoutes:
    """The routes marked ``opt={DIRECT: True}``, by their path. Each is answered with what
    Litestar resolves for its handler from every layer (app, router, controller, handler):
    its middleware, its ``before_request`` hook and its exception handlers. A marked
    handler that needs more of Litestar (guards, an ``after_request`` or
    ``after_response`` hook, response headers or cookies, parameters other than ``data``
    and ``request``, another method than POST) is refused when the app is built."""

    def __init__(self, app: Litestar) -> None:
        self._routes: dict[str, tuple[ASGIApp, HTTPRouteHandler]] = {}
        for route in app.routes:
            for handler in getattr(route, "route_handlers", ()):
                if handler.opt.get(DIRECT):
                    _check(handler)
                    answer = _answer(handler)
                    for layer in reversed(handler.resolve_middleware()):
                        answer = layer(answer)
                    self._routes[route.path] = (answer, handler)
        self._cors = app.cors_config is not None

    def of(self, scope: Scope) -> tuple[ASGIApp, HTTPRouteHandler] | None:
        """The direct route of an HTTP request, or None: Litestar answers it."""
        found = self._routes.get(scope["path"])
        if found is None or scope.get("method") != "POST" or scope.get("root_path"):
            return None
        for name, value in scope["headers"]:
            if (name == b"host" and _HOST.match(value) is None) or (
                name == b"origin" and self._cors
            ):
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


def _check(handler: HTTPRouteHandler) -> None:
    """Refuse a handler whose answer needs more of Litestar than ``_answer`` does."""
    beyond = {
        "a method other than POST": handler.http_methods != {"POST"},
        "parameters other than (data, request)": (
            set(handler.parsed_fn_signature.parameters) != {"data", "request"}
        ),
        "guards": bool(handler.resolve_guards()),
        "an after_request hook": any(layer.after_request for layer in handler.ownership_layers),
        "an after_response hook": handler.resolve_after_response() is not None,
        "response headers or cookies": bool(
            handler.resolve_response_headers() or handler.resolve_response_cookies()
        ),
        "no before_request hook decoding its body": handler.resolve_before_request() is None,
    }
    needs = [what for what, found in beyond.items() if found]
    if needs:
        raise ValueError(f"{handler} cannot be a direct route: it has {', '.join(needs)}")


def _answer(route_handler: HTTPRouteHandler) -> ASGIApp:
    """The route as an ASGI app: its ``before_request`` hook (``strict_body``: the body
    decoded strictly), the handler, its bytes sent; an exception is answered by the
    handler's exception handlers."""
    fn = route_handler.fn
    status = route_handler.status_code
    before = route_handler.resolve_before_request()
    handlers = route_handler.resolve_exception_handlers()

    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        request: Request[Any, Any, Any] = Request(scope, receive, send)
        try:
            if before is not None:
                await before(request)
            body: bytes = await fn(data=await request.json(), request=request)
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
    """The handler Litestar's exception layer picks: an ``HTTPException``'s status code
    first, then the nearest class of ``exc`` (its MRO), and for any other exception a
    handler of status 500 last."""
    if isinstance(exc, HTTPException):
        found = handlers.get(exc.status_code)
        if found is not None:
            return found
    for kind in type(exc).__mro__:
        found = handlers.get(kind)
        if found is not None:
            return found
    if not isinstance(exc, HTTPException) and (found := handlers.get(500)) is not None:
        return found
    raise exc
