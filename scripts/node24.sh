#!/bin/sh
# Runs a command on Node 24 LTS: the machine's own Node when it is 24 or newer, else the pinned
# release scripts/install-node.mjs installs into .tools/node/ (once, saying so in one line). Every
# package.json script that starts a process goes through here, so `npm start`, `npm run worker`, the
# benches... run on the Node the suite passed on.
#
#   sh scripts/node24.sh node --import tsx entrypoints/main.ts
#
# `exec` replaces this shell: the command is npm's child itself, so the signals npm passes on
# (Ctrl-C, a SIGTERM) reach it directly and its exit status is npm's.
set -e
bin=$(node "$(dirname "$0")/install-node.mjs")
PATH="$bin:$PATH"
export PATH
exec "$@"
