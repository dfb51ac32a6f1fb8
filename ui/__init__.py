"""The thin Streamlit layer shared by app.py and the pages: state, cached calls into `retrieval`, charts."""
