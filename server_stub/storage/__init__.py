"""Where bytes live beside the database: artifact object stores (files, S3), private files,
and the one-process rule of a SQLite database."""
