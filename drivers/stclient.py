"""A learner without a browser: a client that speaks Streamlit's own websocket protocol.

The load driver (scripts/load_driver.py) and the classroom tests need many learners on one real
server. Thirty Chromium tabs on a 2-core machine measure Chromium, not the server; this client
opens the same `/_stcore/stream` websocket the browser opens, sends the same `BackMsg.rerun_script`
the browser sends for an input (all the widget values it holds, the page it wants, the fragment a
widget lives in), and reads the server's `ForwardMsg`s: each run's start (`new_session`), every
element drawn (`delta`), the pages (`navigation`) and the run's end (`script_finished`).

What it waits for is what a learner waits for, minus the browser's drawing: from the input sent
to the end of the run it caused. Elements are kept by their place on the page (delta path), so a
test reads what the learner would see (markdown, alerts, exception boxes, widget values).

An idle tab's timed fragments (`st.fragment(run_every=...)`) are rerun by `stay(seconds)`, as the
browser's timer does.

Two browser habits are optional (the load driver's figures are measured without them):
- `storage={}`: the tab's local storage, which ui/learner/persist.py's component reads and writes. The
  learner answers the component's ask as its JavaScript does (once per session id: the entries it
  holds for the learner, as the trigger value "stored") and keeps what the server hands it to save.
  Progress and class membership then come back in a new session, as they do in the browser.
- `reconnect=True`: when the websocket closes (a replica stopped), the learner reconnects to the
  same URL like Streamlit's frontend: a new session (behind nginx, on another replica: the cookie
  the handshake sets is kept), the page asked again with the same query string, page and widget
  values, the storage answered again, and then the input that was lost, once more (what a learner
  does when a click brought nothing). `reconnects` counts them.

Deliberately left out: drawing, file uploads, the other components, history navigation.

Example (inside asyncio):
    async with Learner("http://127.0.0.1:8501", "attention", "lang=en") as me:
        await me.open()
        await me.set_text("Il gatto dorme sul divano.")
        await me.trigger("attention.view", "layer", {"layer": 3, "head": 0})
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

FINISHED = 0          # ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY
EARLY_FOR_RERUN = 2   # another run follows this one
FRAGMENT_DONE = 3     # FINISHED_FRAGMENT_RUN_SUCCESSFULLY
STORE_KEY = "app.store"  # ui/learner/persist.py's component: the tab's local storage
RECONNECT_PAUSE_S = 0.5  # between two tries to reconnect (the browser backs off from about that)


class StreamlitProtocolError(RuntimeError):
    """The server closed the connection or did not answer in time."""


class ConnectionLost(StreamlitProtocolError):
    """The websocket closed (the server stopped, or the proxy in front lost it)."""


@dataclass
class Widget:
    id: str
    kind: str          # the element's oneof name: "slider", "radio", "text_area", "button"...
    proto: Any         # the element's own message (Slider, Radio...)
    fragment_id: str = ""
    form_id: str = ""


@dataclass
class Action:
    """One input and the run it caused."""
    name: str
    wait_s: float
    bytes_in: int
    runs: int
    start: float = 0.0   # time.perf_counter() when the input was sent (the load driver's CPU share)


@dataclass
class Learner:
    """One learner's websocket session on a running server (see the module docstring)."""

    base_url: str
    path: str = ""
    query: str = ""
    cookie: str = ""        # e.g. a load balancer's affinity cookie, sent with the websocket
    timeout_s: float = 120.0
    elements: dict[tuple[int, ...], tuple[str, Any]] = field(default_factory=dict)
    widgets: dict[str, Widget] = field(default_factory=dict)   # by user key
    pages: list[tuple[str, str, str]] = field(default_factory=list)  # (hash, title, url path)
    page_hash: str = ""
    exceptions: list[str] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    auto_reruns: dict[str, float] = field(default_factory=dict)  # fragment id -> run_every (s)
    storage: dict[str, str] | None = None  # the tab's local storage; None: not kept (see the docstring)
    reconnect: bool = False   # reconnect when the websocket closes (see the docstring)
    reconnects: int = 0       # how many times it did
    _asked: str = ""          # the storage component's last ask answered ("sid/count")
    run_page: str = ""        # the page hash the last run read ran under (its new_session)
    run_was_section: bool = False  # whether that run ran sections (fragments) only
    _states: dict[str, WidgetState] = field(default_factory=dict)  # by widget id
    _ws: Any = None
    _bytes: int = 0
    _session_id: str = ""

    async def __aenter__(self) -> "Learner":
        await self._connect()
        return self

    async def _connect(self) -> None:
        ws_url = self.base_url.replace("http", "ws", 1).rstrip("/") + "/_stcore/stream"
        self._ws = await websockets.connect(ws_url, subprotocols=["streamlit"], origin=self.base_url,
                                            max_size=None, open_timeout=self.timeout_s,
                                            additional_headers={"Cookie": self.cookie} if self.cookie else None,
                                            ping_interval=None)
        # A proxy may set a cookie on the handshake (nginx's replica cookie, rewritten when it sent
        # this learner to another replica): the browser keeps it for the next request.
        response = getattr(self._ws, "response", None)
        if response is not None:
            self.cookie = merge_cookies(self.cookie, response.headers.get_all("Set-Cookie"))

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        if self._ws is not None:
            ws, self._ws = self._ws, None
            try:
                await ws.close()
            except OSError:
                pass  # already gone with its server

    async def _restore(self) -> None:
        """Reconnect after the websocket closed, and ask for the page again as the browser does."""
        self.reconnects += 1
        await self.close()
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                await self._connect()
                self.elements.clear()
                self.auto_reruns.clear()
                # The browser's first message on a new session: its address, its page, its widgets' values.
                await self._rerun("reconnect", retry=False)
                return
            except (OSError, asyncio.TimeoutError, websockets.InvalidHandshake, websockets.ConnectionClosed,
                    ConnectionLost) as e:
                await self.close()
                if time.monotonic() > deadline:
                    raise ConnectionLost(f"could not reconnect in {self.timeout_s} s: {e}") from e
                await asyncio.sleep(RECONNECT_PAUSE_S)  # a server (or a proxy's next replica) on its way

    # -- inputs
    async def open(self) -> Action:
        """The first request of a tab opened on `base_url/path?query`."""
        return await self._rerun("open", page_name=self.path)

    async def set_text(self, text: str) -> Action:
        """Type into the sidebar's text box and leave it (the box sends its value on blur)."""
        return await self.set_value("app.text", text, name="text")

    async def slide(self, key: str, value: float) -> Action:
        return await self.set_value(key, value, name=f"slide {key}")

    async def set_value(self, key: str, value: Any, name: str | None = None) -> Action:
        w = self.widget(key)
        self._states[w.id] = _state_for(w, value)
        if w.form_id:  # a form's widgets travel with its submit button
            return Action(name or key, 0.0, 0, 0)
        return await self._rerun(name or f"set {key}", fragment_id=w.fragment_id)

    async def click(self, key: str, name: str | None = None) -> Action:
        """A button, or a form's submit button (give the form's submitter key, e.g.
        'FormSubmitter:quiz.attention.x.form-Check')."""
        w = self.widget(key)
        trigger = WidgetState(id=w.id, trigger_value=True)
        return await self._rerun(name or f"click {key}", fragment_id=w.fragment_id, trigger=trigger)

    async def trigger(self, key: str, event: str, value: Any = None, name: str | None = None) -> Action:
        """A component (Streamlit components v2) calling `setTriggerValue(event, value)`: the rerun
        of its section, with the event's callback first."""

        state = self.trigger_state(key, event, value)
        return await self._rerun(name or f"trigger {key}", fragment_id=self.widget(key).fragment_id, trigger=state)

    def trigger_state(self, key: str, event: str, value: Any = None) -> WidgetState:
        """The WidgetState a component's `setTriggerValue(event, value)` sends."""
        from streamlit.components.v2.bidi_component.main import _make_trigger_id

        return WidgetState(id=_make_trigger_id(self.widget(key).id, "events"),
                           json_trigger_value=json.dumps([{"event": event, "value": value}]))

    async def reach(self, section: str, name: str | None = None) -> Action:
        """Scroll to a section computed when reached (ui.views.follow.when_reached): its follower asks
        for the section's rerun, as it does in the browser once the section is in sight."""
        return await self.trigger(f"{section}.follow", "stale", "reached", name=name or f"reach {section}")

    async def submit(self, form_key: str, name: str | None = None) -> Action:
        """Press the submit button of the form `form_key` (its key carries the button's label)."""
        submitter = [k for k in self.widgets if k.startswith(f"FormSubmitter:{form_key}-")]
        if len(submitter) != 1:
            raise KeyError(f"form {form_key!r} has submit buttons {submitter}")
        return await self.click(submitter[0], name=name or f"submit {form_key}")

    async def download(self, key: str, name: str = "download") -> Action:
        """Press a deferred download button (`st.download_button` with a callable): the browser asks
        the server to build the file over the websocket, then fetches the file's URL."""
        start, bytes_before = time.perf_counter(), self._bytes
        url = await self.download_url(key)
        await self.fetch(url)
        action = Action(name, time.perf_counter() - start, self._bytes - bytes_before, 0, start)
        self.actions.append(action)
        return action

    async def download_url(self, key: str) -> str:
        """The first half of a download: ask the server to build the file of the deferred download
        button `key`; returns the URL the browser would fetch."""
        import uuid

        w = self.widget(key)
        file_id = getattr(w.proto, "deferred_file_id", "")
        msg = BackMsg()
        req = msg.backend_operation_request
        req.request_id = uuid.uuid4().hex
        req.session_id = self._session_id
        req.deferred_file.file_id = file_id
        await self._ws.send(msg.SerializeToString())
        while True:
            try:
                raw = await asyncio.wait_for(self._ws.recv(), self.timeout_s)
            except (TimeoutError, asyncio.TimeoutError, websockets.ConnectionClosed) as e:
                raise StreamlitProtocolError(f"no download answer: {e}") from e
            self._bytes += len(raw)
            fwd = ForwardMsg.FromString(raw)
            if fwd.WhichOneof("type") == "backend_operation_response":
                resp = fwd.backend_operation_response
                if resp.request_id != req.request_id:
                    continue
                if resp.error_msg or not resp.deferred_file.url:
                    raise StreamlitProtocolError(f"download {key!r} failed: {resp.error_msg}")
                return resp.deferred_file.url

    async def fetch(self, url: str) -> bytes:
        """The second half: fetch a file's URL as the browser does (StreamlitProtocolError if that fails)."""
        import urllib.error
        import urllib.request

        full = url if url.startswith("http") else self.base_url.rstrip("/") + "/" + url.lstrip("/")

        def get() -> bytes:
            headers = {"Cookie": self.cookie} if self.cookie else {}
            try:
                with urllib.request.urlopen(urllib.request.Request(full, headers=headers), timeout=self.timeout_s) as r:
                    return r.read()
            except (urllib.error.URLError, OSError) as e:  # a failed download is the learner's failure, counted
                raise StreamlitProtocolError(f"fetching {url} failed: {e}") from e

        body = await asyncio.to_thread(get)
        self._bytes += len(body)
        return body

    async def set_and_leave(self, key: str, value: Any) -> None:
        """Send a new value and close the tab at once, before the run it causes has ended."""
        w = self.widget(key)
        self._states[w.id] = _state_for(w, value)
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.widget_states.widgets.extend(self._states.values())
        await self._ws.send(msg.SerializeToString())
        await self.close()

    async def goto(self, url_path: str) -> Action:
        """Follow a lesson link of the navigation (its url path: '' for the first page)."""
        for page_hash, _title, path in self.pages:
            if path == url_path:
                return await self._rerun(f"goto {url_path or '/'}", page_hash=page_hash)
        raise KeyError(f"no page {url_path!r} in {[p[2] for p in self.pages]}")

    # -- what the learner sees
    def widget(self, key: str) -> Widget:
        for user_key, w in self.widgets.items():
            if user_key == key:
                return w
        raise KeyError(f"no widget {key!r} on the page; widgets: {sorted(self.widgets)}")

    def keys(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self.widgets if k.startswith(prefix))

    def texts(self) -> list[str]:
        """Every markdown, caption, code, heading and alert body on the page, in page order."""
        out = []
        for _path, (kind, proto) in sorted(self.elements.items()):
            if kind in ("markdown", "heading", "code", "text"):
                out.append(getattr(proto, "body", ""))
            elif kind == "alert":
                out.append(proto.body)
        return out

    def alerts(self) -> list[str]:
        return [proto.body for _p, (kind, proto) in sorted(self.elements.items()) if kind == "alert"]

    # -- the protocol
    async def stay(self, seconds: float) -> list[Action]:
        """Keep the page open for `seconds`, as an idle tab does: the browser reruns every fragment
        drawn with `run_every` at its interval (Streamlit's frontend timer), and so does this.

        Returns the reruns it sent (named "auto"); none when the page has no such fragment."""
        now = time.perf_counter()
        end, due, done = now + seconds, {}, []
        while True:
            now = time.perf_counter()
            for frag, every in self.auto_reruns.items():
                due.setdefault(frag, now + every)
            due = {f: at for f, at in due.items() if f in self.auto_reruns}
            if not due or min(due.values()) > end:
                await asyncio.sleep(max(0.0, end - now))
                return done
            frag, at = min(due.items(), key=lambda x: x[1])
            await asyncio.sleep(max(0.0, at - now))
            due[frag] = at + self.auto_reruns[frag]
            done.append(await self._rerun("auto", fragment_id=frag, auto=True))

    async def _rerun(self, name: str, page_name: str = "", page_hash: str = "", fragment_id: str = "",
                     trigger: WidgetState | None = None, auto: bool = False, retry: bool = True) -> Action:
        start, bytes_before = time.perf_counter(), self._bytes
        while True:
            msg = self._request(page_name, page_hash, fragment_id, trigger, auto)
            runs = 0
            try:
                if self._ws is None:
                    raise ConnectionLost("not connected")
                try:
                    await self._ws.send(msg.SerializeToString())
                except websockets.ConnectionClosed as e:
                    raise ConnectionLost(f"connection closed: {e}") from e
                while True:
                    status = await self._read_run()
                    runs += 1
                    if status in (FINISHED, FRAGMENT_DONE):
                        break
            except ConnectionLost:
                if not (self.reconnect and retry):
                    raise
                await self._restore()
                continue  # the input once more, on the new session
            break
        action = Action(name, time.perf_counter() - start, self._bytes - bytes_before, runs, start)
        self.actions.append(action)
        await self._answer_storage()
        return action

    async def _answer_storage(self) -> None:
        """What ui/learner/persist.py's JavaScript does with the tab's local storage after a run: write the
        entries the server hands it, or, for each run that has not heard it yet, send the entries back."""
        w = self.widgets.get(STORE_KEY)
        if self.storage is None or w is None:
            return
        try:
            data = json.loads(w.proto.json)
        except (ValueError, AttributeError):
            return
        save = data.get("save")
        if isinstance(save, dict):
            for name, value in save.items():
                if value:
                    self.storage[name] = value
                else:
                    self.storage.pop(name, None)
            return
        sid = data.get("sid")
        ask = f"{sid}/{data.get('unheard') or 0}"  # one ask per run not yet heard, as the JavaScript does
        if not sid or ask == self._asked:
            return
        self._asked = ask
        await self.trigger(STORE_KEY, "stored", self.stored(data, self.storage), name="storage")

    @staticmethod
    def stored(data: dict, storage: dict[str, str]) -> dict:
        """What the storage component sends back for its drawing `data`, reading `storage` (the tab's
        local storage), as static/components/progress_store.js does."""
        learner = data["learner"] if isinstance(data.get("learner"), str) else (storage.get(data.get("learnerEntry", "")) or "")

        def at(prefix: str) -> str:
            return f"{prefix}.{learner}" if learner else prefix

        return {"sid": data.get("sid"), "ask": data.get("unheard"), "learner": learner,
                "code": storage.get(at(data.get("progressEntry", ""))), "text": storage.get(at(data.get("textEntry", ""))),
                "klass": storage.get(at(data.get("classEntry", "")))}

    async def send(self, page_hash: str = "", fragment_id: str = "", trigger: WidgetState | None = None) -> None:
        """Send one rerun request and return at once, its run unread (`next_run` reads it): inputs
        that reach the server while another one's run goes, as a quick browser's do."""
        await self._ws.send(self._request("", page_hash, fragment_id, trigger).SerializeToString())

    def _request(self, page_name: str, page_hash: str, fragment_id: str, trigger: WidgetState | None,
                 auto: bool = False) -> BackMsg:
        """The browser's rerun request: its address, the page it names, every widget's value."""
        msg = BackMsg()
        rs = msg.rerun_script
        rs.query_string = self.query
        rs.page_name = page_name
        rs.page_script_hash = page_hash or self.page_hash
        rs.fragment_id = fragment_id
        rs.is_auto_rerun = auto
        rs.widget_states.widgets.extend(list(self._states.values()) + ([trigger] if trigger else []))
        return msg

    async def next_run(self) -> tuple[str, bool, int]:
        """Read the next run to its end: (the page hash it ran under, whether it ran sections
        only, its finish status)."""
        status = await self._read_run()
        return self.run_page, self.run_was_section, status

    async def _read_run(self) -> int:
        """Read messages until a run ends; return its status."""
        seen: set[str] = set()
        fragment_run = False
        while True:
            try:
                raw = await asyncio.wait_for(self._ws.recv(), self.timeout_s)
            except (TimeoutError, asyncio.TimeoutError) as e:
                raise StreamlitProtocolError(f"no answer in {self.timeout_s} s") from e
            except websockets.ConnectionClosed as e:
                raise ConnectionLost(f"connection closed: {e}") from e
            self._bytes += len(raw)
            fwd = ForwardMsg.FromString(raw)
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                fragment_run = bool(fwd.metadata.run.fragment_ids)
                self.run_page, self.run_was_section = fwd.new_session.page_script_hash, fragment_run
                if not fragment_run:
                    self.elements.clear()
                    self.auto_reruns.clear()  # a full run declares its timed fragments anew
                self.page_hash = fwd.new_session.page_script_hash
                self._session_id = fwd.new_session.initialize.session_id or self._session_id
            elif kind == "navigation":
                self.pages = [(p.page_script_hash, p.page_name, p.url_pathname)
                              for p in fwd.navigation.app_pages]
                self.page_hash = fwd.navigation.page_script_hash or self.page_hash
            elif kind == "delta":
                self._on_delta(fwd, seen)
            elif kind == "auto_rerun":
                self.auto_reruns[fwd.auto_rerun.fragment_id] = fwd.auto_rerun.interval
            elif kind == "stop_auto_rerun":
                for frag in fwd.stop_auto_rerun.fragment_ids:
                    self.auto_reruns.pop(frag, None)
            elif kind == "script_finished":
                status = fwd.script_finished
                if status == FINISHED and not fragment_run:
                    # Like the browser: widgets the finished run did not draw are gone.
                    self.widgets = {k: w for k, w in self.widgets.items() if w.id in seen}
                    self._states = {i: s for i, s in self._states.items() if i in seen}
                return status

    def _on_delta(self, fwd: ForwardMsg, seen: set[str]) -> None:
        delta = fwd.delta
        path = tuple(fwd.metadata.delta_path)
        if delta.WhichOneof("type") != "new_element":
            return
        kind = delta.new_element.WhichOneof("type")
        proto = getattr(delta.new_element, kind)
        self.elements[path] = (kind, proto)
        if kind == "exception":
            self.exceptions.append(f"{proto.type}: {proto.message}")
        wid = getattr(proto, "id", "")
        if isinstance(wid, str) and wid.startswith("$$ID-"):
            user_key = wid.split("-", 2)[2] if wid.count("-") >= 2 else ""
            if user_key:
                seen.add(wid)
                self.widgets[user_key] = Widget(wid, kind, proto, delta.fragment_id,
                                                getattr(proto, "form_id", ""))


def heatmap_tokens(me: Learner, key: str = "attention.view") -> set[str]:
    """The tokens a heatmap labels its axes with (spaces as the page writes them, ␣, undone): the
    attention lesson's browser view's labels, or a plotly chart's; empty if it is not on the page."""
    import html
    import json

    try:
        proto = me.widget(key).proto
        if hasattr(proto, "spec"):  # st.plotly_chart
            data = {"spec": proto.spec}
        else:  # a component: a browser view (ui/views/browser.py) or ui.views.live_chart
            data = json.loads(proto.json)
        if "ticks" in data:  # the attention view: its axis labels, escaped as plotly text
            return {html.unescape(t).replace("\u2423", " ") for t in data["ticks"]}
        spec = json.loads(data["spec"])
    except (KeyError, ValueError, AttributeError):
        return set()
    labels = []
    for axis in ("xaxis", "yaxis"):
        labels += [str(t) for t in spec.get("layout", {}).get(axis, {}).get("ticktext", []) or []]
    for trace in spec.get("data", []):
        for k in ("x", "y"):
            labels += [str(t) for t in trace.get(k, []) or []]
    return {t.replace("\u2423", " ") for t in labels}


def merge_cookies(cookie: str, set_cookies: list[str]) -> str:
    """A Cookie header with the cookies of `Set-Cookie` headers put in (same name: replaced).

    Example: merge_cookies("a=1; itt_replica=r0", ["itt_replica=r1; Path=/; HttpOnly"]) -> "a=1; itt_replica=r1"
    """
    jar = dict(part.strip().split("=", 1) for part in cookie.split(";") if "=" in part)
    for header in set_cookies:
        pair = header.split(";", 1)[0].strip()
        if "=" in pair:
            name, value = pair.split("=", 1)
            jar[name.strip()] = value.strip()
    return "; ".join(f"{k}={v}" for k, v in jar.items())


def _state_for(w: Widget, value: Any) -> WidgetState:
    """The WidgetState the browser sends for a widget of this kind holding `value`."""
    s = WidgetState(id=w.id)
    if w.kind == "slider":
        s.double_array_value.data.extend([float(v) for v in (value if isinstance(value, (list, tuple)) else [value])])
    elif w.kind in ("text_area", "text_input", "chat_input"):
        s.string_value = str(value)
    elif w.kind in ("radio", "selectbox"):
        # value: the option's index; the browser sends the option's label as shown
        s.string_value = w.proto.options[int(value)]
    elif w.kind == "checkbox":
        s.bool_value = bool(value)
    elif w.kind == "number_input":
        s.double_value = float(value)
    else:
        raise NotImplementedError(f"no state for a {w.kind} widget")
    return s
