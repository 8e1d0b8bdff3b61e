#!/bin/sh
# First start (no cluster in PGDATA): the cluster, its user and its database, then the server.
# Connections through the container's own socket are trusted (nothing else shares it); TCP ones
# need the password (scram-sha-256).
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD (deploy/compose.yaml reads ITT_DB_PASSWORD)}"
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA"
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --pgdata="$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" --encoding=UTF8 \
    --auth-local=trust --auth-host=scram-sha-256
  rm -f "$pwfile"
  echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" \
    | postgres --single -D "$PGDATA" postgres >/dev/null
fi
exec "$@"
