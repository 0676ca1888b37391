#!/bin/sh
# Runs a command on Node 24 LTS: the machine's own Node when it is 24 or newer, else the pinned
# release scripts/install-node.mjs installs into .tools/node/ (once, saying so in one line). Every
# package.json script that starts a process goes through here, so `npm start`, `npm run worker`, the
# benches... run on the Node the suite passed on.
#
#   "start": "exec sh scripts/node24.sh node --import tsx entrypoints/main.ts"
#
# Both `exec`s (the script's and this file's) replace a shell: the command is npm's child itself, so
# the signals npm passes on (Ctrl-C, a supervisor's SIGTERM) reach it, and npm waits for it and exits
# with its status. Without them npm's `sh -c` stays in between, takes the signal and leaves the
# service running without a parent.
set -e
bin=$(node "$(dirname "$0")/install-node.mjs")
PATH="$bin:$PATH"
export PATH
exec "$@"
