#!/bin/sh
# One-shot (temporalio/admin-tools): creates Temporal's databases on PostgreSQL and brings their schemas up
# to the server's version. Safe to run on every `docker compose up`: `create` tolerates an existing database
# and `update-schema` only applies what is missing.
set -eu
tool() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p 5432 -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" "$@"; }
schema=/etc/temporal/schema/postgresql/v12
for db in temporal temporal_visibility; do
  dir=$([ "$db" = temporal ] && echo temporal || echo visibility)
  tool --db "$db" create || true
  tool --db "$db" setup-schema -v 0.0 2>/dev/null || true
  tool --db "$db" update-schema -d "$schema/$dir/versioned"
done
echo "Temporal schemas are up to date"
