"""What tests/ and scripts/ both drive: the app through Streamlit's websocket (`stclient`) and in a
real browser (`browser`, `axe`), a PostgreSQL server started for a run (`postgres`), and a local
stand-in of the Hugging Face Hub (`hub_standin`). Test fixtures built on them stay in tests/."""
