/**
 * The commands the image runs (`podman run relayer <command>`, compose `command:`, Kubernetes
 * `args:`, `kubectl exec` for the one-shot `reconcile`) and the entry point each loads; each is also the package script of the same name (for
 * `embedded`, `npm start`).
 */
export const PROCESS_COMMANDS = {
  api: './api-main.ts',
  worker: './worker-main.ts',
  prover: './prover-main.ts',
  migrate: './migrate-main.ts',
  reconcile: './reconcile-main.ts',
  embedded: './main.ts',
} as const;

export type ProcessCommand = keyof typeof PROCESS_COMMANDS;
