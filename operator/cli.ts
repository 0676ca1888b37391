/**
 * `npm run operator -- <command> [args] --reason "<why>" [--by <who>]`: the operator's controls, each
 * audited (operator_actions: who, when, why; and a log line):
 *   stop-signing       every api process refuses every signed response (503 SIGNING_STOPPED) within seconds
 *   resume-signing     signing again
 *   pause-ad <adId>    the ad takes no trade and its Maker cannot set it ACTIVE (trades under way go on)
 *   resume-ad <adId>   the ad back to the status it had
 *   status             the signing switch and the last audited actions (no --reason needed)
 * `--by` defaults to OPERATOR_NAME, else the login name. DATABASE_URL names the database (as for the api).
 */
import { userInfo } from 'node:os';
import { pino } from 'pino';
import { createKnex } from '../db/knex.ts';
import { latestOperatorActions, setSwitch, switchEngaged } from '../db/repositories/operator.ts';
import { pauseAd, resumeAd } from './ads.ts';

const COMMANDS = ['stop-signing', 'resume-signing', 'pause-ad', 'resume-ad', 'status'] as const;
export type OperatorCommand = (typeof COMMANDS)[number];
export const OPERATOR_COMMANDS: readonly OperatorCommand[] = COMMANDS;

/** A parsed command line, or the usage error naming what is wrong. */
export function parseOperatorArgs(
  argv: string[], env: Record<string, string | undefined>,
): { command: OperatorCommand; adId?: string; actor: string; reason: string } {
  const [command, ...rest] = argv;
  if (!COMMANDS.includes(command as OperatorCommand)) throw new Error(`command must be one of ${COMMANDS.join(', ')}, received '${command ?? ''}'`);
  const flag = (name: string) => {
    const at = rest.indexOf(`--${name}`);
    if (at < 0) return undefined;
    const value = rest[at + 1];
    if (value === undefined || value.startsWith('--')) throw new Error(`--${name} needs a value`);
    rest.splice(at, 2);
    return value;
  };
  const reason = flag('reason')?.trim() ?? '';
  const actor = (flag('by') ?? env.OPERATOR_NAME ?? userInfo().username).trim();
  const positional = rest.filter((a) => !a.startsWith('--'));
  const unknown = rest.filter((a) => a.startsWith('--'));
  if (unknown.length > 0) throw new Error(`unknown option ${unknown[0]}`);
  const needsAd = command === 'pause-ad' || command === 'resume-ad';
  if (needsAd && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(positional[0] ?? '')) {
    throw new Error(`${command} needs the ad's id (a UUID), received '${positional[0] ?? ''}'`);
  }
  if (!needsAd && positional.length > 0) throw new Error(`${command} takes no argument, received '${positional[0]}'`);
  if (command !== 'status' && reason.length < 5) throw new Error('--reason must say why (at least 5 characters): it is audited');
  if (!actor) throw new Error('--by (or OPERATOR_NAME) must name who acts');
  return { command: command as OperatorCommand, ...(needsAd ? { adId: positional[0] } : {}), actor, reason };
}

async function main(): Promise<void> {
  const logger = pino({ base: { process: 'operator' } });
  const parsed = parseOperatorArgs(process.argv.slice(2), process.env);
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL must name the database');
  const knex = createKnex(url, 1);
  try {
    const who = { actor: parsed.actor, reason: parsed.reason };
    switch (parsed.command) {
      case 'stop-signing':
      case 'resume-signing': {
        const stop = parsed.command === 'stop-signing';
        const { already } = await setSwitch(knex, 'signing_stopped', stop, { action: parsed.command, ...who });
        const said = stop ? 'signing stopped: every api process refuses signed responses within seconds' : 'signing resumed';
        logger.warn({ action: parsed.command, ...who, already }, said);
        break;
      }
      case 'pause-ad': {
        const changed = await pauseAd(knex, parsed.adId!, who);
        logger.warn({ action: parsed.command, adId: parsed.adId, ...who, already: !changed }, 'ad paused by the operator');
        break;
      }
      case 'resume-ad':
        await resumeAd(knex, parsed.adId!, who);
        logger.warn({ action: parsed.command, adId: parsed.adId, ...who }, 'ad resumed by the operator');
        break;
      case 'status': {
        const stopped = await switchEngaged(knex, 'signing_stopped');
        console.log(JSON.stringify({ signingStopped: stopped, lastActions: await latestOperatorActions(knex, 20) }, null, 2));
        break;
      }
    }
  } finally {
    await knex.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: Error) => {
    console.error(`operator: ${error.message}`);
    process.exit(1);
  });
}
