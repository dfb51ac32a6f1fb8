"""Placeholder until written."""

import streamlit as st

from ui import state

state.init_state()
st.title("tuning")
