import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { waitForPage } from './browser.ts';

/**
 * What the browser tests read of the page at /app (app/): its status line and its ready mark, each
 * waited on as a condition that names itself when it gives up.
 */

/**
 * The status line's text now, '' while the page has said nothing (read without waiting, so a poll
 * over it fails with what it waited for and what the line said, not with a locator's timeout).
 */
export async function statusText(page: Page): Promise<string> {
  return (await page.locator('.status-line .status').allTextContents()).join('');
}

/** Waits until the status line says `text` (a string: exactly; a RegExp: matching); `waitingFor` names it in the failure. */
export async function saysStatus(page: Page, text: string | RegExp, waitingFor: string, timeout = 30_000): Promise<void> {
  const poll = expect.poll(() => statusText(page), { timeout, message: `waiting for the status line: ${waitingFor}` });
  await (typeof text === 'string' ? poll.toBe(text) : poll.toMatch(text));
}

/** Waits until the status line says `action` is over (done or failed), and expects it done. */
export async function saysDone(page: Page, action: string, timeout = 60_000): Promise<void> {
  const escaped = action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await saysStatus(page, new RegExp(`^${escaped}(: done| failed)`), `"${action}" over`, timeout);
  expect(await statusText(page)).toBe(`${action}: done.`);
}

/** Waits until the page has loaded the service's chains and routes and resumed what a reload left (its `data-ready` mark). */
export async function pageReady(page: Page, timeout = 60_000): Promise<void> {
  await waitForPage(page, () => document.documentElement.dataset.ready === 'true', 'the page at /app to be ready (html[data-ready])', timeout);
}
