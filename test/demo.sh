#!/usr/bin/env bash
# The README's first command: install what is missing, build and install
# snowflake, then run the demo (test/demo-server.sh) as an unprivileged user.
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
sf_setup
"${RUN_AS[@]}" env PATH="$PG_BINDIR:$PATH" bash "$RUN_DIR/test/demo-server.sh"
