import type { Knex } from 'knex';

/** A switch the api processes obey (operator_switches). */
export type OperatorSwitch = 'signing_stopped';

/** One use of an operator control, as audited. */
export interface OperatorAction {
  action: string;
  /** What it acted on (an ad id), or null for a service-wide switch. */
  subject: string | null;
  actor: string;
  reason: string;
  createdAt: Date;
}

/**
 * The channel a change of a switch is NOTIFYed on (payload: the switch's name), at the commit of the
 * transaction that changed it: the api processes LISTEN on it instead of reading the switch every second.
 */
export const OPERATOR_SWITCHES_CHANNEL = 'operator_switches';

/** Whether `name` is engaged (false when its row is missing: a database older than the switch). */
export async function switchEngaged(knex: Knex, name: OperatorSwitch): Promise<boolean> {
  const row: { engaged: boolean } | undefined = await knex('operator_switches').where({ name }).first('engaged');
  return row?.engaged ?? false;
}

/**
 * Sets `name` and audits it in one transaction, NOTIFYing OPERATOR_SWITCHES_CHANNEL as it commits (every
 * api process re-reads the switch then); returns whether it was already so (nothing changed then but the audit row).
 */
export async function setSwitch(
  knex: Knex, name: OperatorSwitch, engaged: boolean, action: Omit<OperatorAction, 'createdAt' | 'subject'>,
): Promise<{ already: boolean }> {
  return knex.transaction(async (trx) => {
    const row: { engaged: boolean } | undefined = await trx('operator_switches').where({ name }).forUpdate().first('engaged');
    if (row) await trx('operator_switches').where({ name }).update({ engaged, changed_at: trx.fn.now(), changed_by: action.actor, reason: action.reason });
    else await trx('operator_switches').insert({ name, engaged, changed_by: action.actor, reason: action.reason });
    await trx('operator_actions').insert({ action: action.action, subject: null, actor: action.actor, reason: action.reason });
    await trx.raw('SELECT pg_notify(?, ?)', [OPERATOR_SWITCHES_CHANNEL, name]);
    return { already: row?.engaged === engaged };
  });
}

/** Appends one audited action inside `trx` (the caller's change and its audit commit together). */
export async function recordOperatorAction(trx: Knex | Knex.Transaction, action: Omit<OperatorAction, 'createdAt'>): Promise<void> {
  await trx('operator_actions').insert({ action: action.action, subject: action.subject, actor: action.actor, reason: action.reason });
}

/** The latest audited actions, newest first. */
export async function latestOperatorActions(knex: Knex, limit: number): Promise<OperatorAction[]> {
  const rows: { action: string; subject: string | null; actor: string; reason: string; created_at: Date }[] = await knex('operator_actions')
    .orderBy('id', 'desc').limit(limit).select('action', 'subject', 'actor', 'reason', 'created_at');
  return rows.map((r) => ({ action: r.action, subject: r.subject, actor: r.actor, reason: r.reason, createdAt: r.created_at }));
}

/** An ad the operator paused: the status it had, who paused it and why. */
export interface OperatorAdHold {
  previousStatus: string;
  actor: string;
  reason: string;
}

/** The operator's hold on an ad, if any (read inside the ad's lock by whoever would change its status). */
export async function operatorAdHold(trx: Knex | Knex.Transaction, adId: string): Promise<OperatorAdHold | undefined> {
  const row: { previous_status: string; actor: string; reason: string } | undefined = await trx('operator_ad_holds')
    .where({ ad_id: adId }).first('previous_status', 'actor', 'reason');
  return row && { previousStatus: row.previous_status, actor: row.actor, reason: row.reason };
}

/** Puts a hold on the ad (false when it already had one: nothing changes). */
export async function insertOperatorAdHold(trx: Knex.Transaction, hold: OperatorAdHold & { adId: string }): Promise<boolean> {
  const rows = await trx('operator_ad_holds')
    .insert({ ad_id: hold.adId, previous_status: hold.previousStatus, actor: hold.actor, reason: hold.reason })
    .onConflict('ad_id').ignore().returning('ad_id');
  return rows.length === 1;
}

/** Takes the hold off the ad; returns it, or undefined when there was none. */
export async function deleteOperatorAdHold(trx: Knex.Transaction, adId: string): Promise<{ previousStatus: string } | undefined> {
  const rows: { previous_status: string }[] = await trx('operator_ad_holds').where({ ad_id: adId }).delete().returning('previous_status');
  return rows[0] && { previousStatus: rows[0].previous_status };
}
