"""The workspace store, beside the engine: datasets with their files as uploaded, runs, embeddings and grades by
rater, in SQLite by default or PostgreSQL for a team (`workspace`)."""
