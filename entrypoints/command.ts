import { PROCESS_COMMANDS, type ProcessCommand } from './process-commands.ts';

// The image's entry point: `node --import ./entrypoints/hold-secrets.mjs --import tsx entrypoints/command.ts <command>` loads the process
// the command names into this very node process, so node is the container's main process and
// SIGTERM reaches the handlers of runProcess/runTask directly (no npm or shell in between to
// swallow it, as `npm run` -> `sh -c` -> node did).

const EX_USAGE = 64;

const command = process.argv[2] ?? '';
if (Object.hasOwn(PROCESS_COMMANDS, command)) {
  await import(PROCESS_COMMANDS[command as ProcessCommand]);
} else {
  console.error(`unknown command '${command}': expected one of ${Object.keys(PROCESS_COMMANDS).join(', ')}`);
  process.exit(EX_USAGE);
}
