"""The rater in this browser: the name typed once, kept for the browser so a reload or a new tab does not ask again,
and the rater's choice of blind grading (the other raters' grades of a document hidden until they have graded it).

Both are kept in cookies of the app's own origin, by Streamlit's own means: the page writes them with a script of
its own (`st.html`, run in the page, no request anywhere) when the rater changes them, and Streamlit hands the
cookies of the request that opens a session to `st.context.cookies`, read on the session's first run. Not in the
link: a copied link would make whoever opens it grade under the sender's name. Where an authenticating proxy names
the user (ui.workspace.proxy_user, passed in), its header wins: no name is read from the cookie, and the name's input,
which writes it, is not drawn. The name read is cleaned where it is used, as a typed one is (ui.workspace.person).
"""

from __future__ import annotations

import json
from urllib.parse import unquote

import streamlit as st

from . import state

NAME_COOKIE = "retrieval_lab_rater"
BLIND_COOKIE = "retrieval_lab_blind"
MAX_AGE = (
    30 * 24 * 3600
)  # seconds the browser keeps them (a month: a course's stretch of grading); a blank name drops it
MAX_NAME = 200  # characters of a name, as the text inputs allow
RECALLED = "rater_recalled"  # the session's first run read the cookies
PENDING = "rater_cookies_pending"  # {cookie: value} the next run writes into the browser
BLIND = "judge_blind"  # the blind-grading toggle's key (ui.judge)


def recall(proxy_user: str | None) -> None:
    """On a session's first run: the name and the blind-grading choice kept in this browser, as the session's (a
    name only where no proxy names the user, `proxy_user`, and none is typed yet)."""
    if st.session_state.get(RECALLED):
        return
    st.session_state[RECALLED] = True
    try:
        cookies = st.context.cookies
        kept_name, kept_blind = cookies.get(NAME_COOKIE), cookies.get(BLIND_COOKIE)
    except (AttributeError, RuntimeError):  # no browser request (a bare script run)
        return
    if kept_blind == "1":
        st.session_state.setdefault(BLIND, True)
    if isinstance(kept_name, str) and proxy_user is None and not st.session_state.get(state.RATER):  # a cookie's text
        name = unquote(kept_name)[:MAX_NAME].strip()
        if name:
            st.session_state[state.RATER] = name


def _name_changed() -> None:
    st.session_state.setdefault(PENDING, {})[NAME_COOKIE] = str(st.session_state.get(state.RATER) or "").strip()[
        :MAX_NAME
    ]


def _blind_changed() -> None:
    st.session_state.setdefault(PENDING, {})[BLIND_COOKIE] = "1" if st.session_state.get(BLIND) else ""


def name_input(label: str, placeholder: str, help_: str) -> None:
    """The text input of the rater's name (kept in this browser once typed); the cookies changed since the last run
    written into the browser."""
    st.text_input(
        label,
        key=state.RATER,
        max_chars=MAX_NAME,
        persist_state="session",
        placeholder=placeholder,
        on_change=_name_changed,
        help=help_ + " Kept in this browser (a cookie of this site), so a reload "
        "does not ask again; clear it to forget it.",
    )
    write_pending()


def blind_toggle() -> bool:
    """The rater's choice of blind grading (kept in this browser); whether it is on."""
    on = st.toggle(
        "Blind grading",
        key=BLIND,
        persist_state="session",
        on_change=_blind_changed,
        help="Hide the other raters' grades of a document, and where they differ, until you have graded it "
        "yourself, so their grades cannot sway yours (as annotation tools do). Kept in this browser.",
    )
    write_pending()
    return bool(on)


def cookie_script(cookies: dict[str, str]) -> str:
    """The page's script setting each cookie (an empty value: deleting it), for this site only: the values as JSON
    strings, every character that could end the script (<, >, &, line separators) escaped."""
    lines = []
    for name, value in sorted(cookies.items()):
        literal = (
            json.dumps(value, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        )
        age = MAX_AGE if value else 0
        lines.append(
            f'document.cookie = "{name}=" + encodeURIComponent({literal}) + "; path=/; max-age={age}; SameSite=Strict";'
        )
    return "<script>" + " ".join(lines) + "</script>"


def write_pending() -> None:
    """Write the cookies changed by the rater since the last run into the browser, once."""
    pending = st.session_state.pop(PENDING, None)
    if pending:
        st.html(cookie_script(pending), unsafe_allow_javascript=True, width="content")
