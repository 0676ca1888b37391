"""Schemathesis hooks for api/schemathesis.test.ts's run over the event streams (issue 29).

GET /v1/events takes a Bearer token or `?ticket=` (POST /v1/events/ticket: single use, for a browser's
EventSource). Schemathesis cannot make a valid single-use ticket, so before each generated request to
GET /v1/events this asks the service for a fresh one with the run's token and puts it in the query;
the stream it opens is checked like any answer. Once the token has expired no ticket is given and the
request goes as generated (the documented 401). Each ticketed request's status is appended to
RELAYER_TICKET_LOG, one line each, for the test to assert on. Probes schemathesis sends on its own
(no auth, invalid auth) do not pass through here, so they still carry no valid ticket.
"""
import json
import os
import urllib.request

import schemathesis

_TICKET_URL = os.environ.get("RELAYER_TICKET_URL", "")
_TOKEN = os.environ.get("RELAYER_TICKET_TOKEN", "")
_LOG = os.environ.get("RELAYER_TICKET_LOG", "")
# Ids of the cases given a ticket (Case may not take new attributes).
_ticketed = set()


def _is_user_stream(case) -> bool:
    # The operation, and the request itself (schemathesis also tries other methods on the path: 405).
    return case.operation.path == "/v1/events" and case.operation.method.upper() == "GET" and (case.method or "GET").upper() == "GET"


def _fresh_ticket():
    request = urllib.request.Request(_TICKET_URL, method="POST", data=b"", headers={"Authorization": f"Bearer {_TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.load(response)["ticket"]
    except Exception:  # the token expired (401): no ticket any more
        return None


@schemathesis.hook
def before_call(context, case, kwargs):
    if not _TICKET_URL or not _is_user_stream(case):
        return
    ticket = _fresh_ticket()
    if ticket is None:
        return
    case.query = {**(case.query or {}), "ticket": ticket}
    _ticketed.add(case.id)


@schemathesis.hook
def after_call(context, case, response):
    if _LOG and case.id in _ticketed:
        with open(_LOG, "a", encoding="utf8") as log:
            log.write(f"{response.status_code}\n")
